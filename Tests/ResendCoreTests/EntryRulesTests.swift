import HAL
import ResendCore
import Testing

@Suite("Entry rules and their persisted state")
struct EntryRulesTests {
    @Test func theDefaultsFitA16ColumnDisplay() {
        #expect(EntryConfig().problems(columns: 16).isEmpty)
        #expect(EntryConfig().problems(columns: 20).isEmpty)
    }

    @Test func aFieldWiderThanTheDisplayIsNamed() {
        var config = EntryConfig()
        config.maxLength = 12
        #expect(config.problems(columns: 16) == ["fieldPrefix and maxLength need 18 columns; the display has 16"])
        #expect(config.problems(columns: 20).isEmpty)
    }

    @Test func lengthsAndTimesAreRangeChecked() {
        var config = EntryConfig()
        config.minLength = 9
        config.validity = .milliseconds(1_500)
        config.lockouts = []
        config.pulse = .zero
        config.entryTimeout = .seconds(90_000)
        #expect(
            config.problems(columns: 16) == [
                "minLength must be from 1 to maxLength",
                "entryTimeout must be more than 0 and at most a day",
                "validity must be whole seconds",
                "pulse must be more than 0 and at most a day",
                "lockouts must name at least one lockout",
            ])
        var none = EntryConfig()
        none.maxAttempts = nil
        none.lockouts = []
        #expect(none.problems(columns: 16).isEmpty, "no limit needs no lockouts")
    }

    @Test func aTextWiderThanTheDisplayIsNamedAtItsWidestCount() {
        var config = EntryConfig()
        config.texts.wrongCode = "Wrong code, {n} tries left"
        #expect(config.problems(columns: 20) == ["wrongCode \"Wrong code, 3 tries left\" is 24 characters wide; the display has 20 columns"])
    }

    private let wall = WallTime(millisecondsSinceEpoch: 1_718_000_000_000)
    private let t0 = Instant(nanoseconds: 7_000_000_000)

    @Test func wrongCodesAreKeptUpToTheLimitAndRoundsWithinTheLockouts() {
        let stored = PersistedEntryState(failures: 99, rounds: 1_000, open: false)
        let resumed = stored.resumed(monotonicNow: t0, wallNow: wall, config: EntryConfig())
        #expect(resumed.failures == 3)
        #expect(resumed.rounds == 3)
        var unlimited = EntryConfig()
        unlimited.maxAttempts = nil
        #expect(stored.resumed(monotonicNow: t0, wallNow: wall, config: unlimited) == EntrySnapshot())
    }

    @Test func negativeCountsFromAFileBecomeZero() {
        let stored = PersistedEntryState(failures: -5, rounds: -1, lockoutSeconds: -30)
        #expect(stored.resumed(monotonicNow: t0, wallNow: wall, config: EntryConfig()) == EntrySnapshot())
    }

    @Test func anOpenFieldResumesOnlyWithValidityLeftAndNeverMore() {
        let config = EntryConfig()
        let left = PersistedEntryState(open: true, validUntil: wall + .seconds(100))
        #expect(
            left.resumed(monotonicNow: t0, wallNow: wall, config: config)
                == EntrySnapshot(open: true, validUntil: t0 + .seconds(100)))
        let gone = PersistedEntryState(open: true, validUntil: wall - .seconds(1))
        #expect(gone.resumed(monotonicNow: t0, wallNow: wall, config: config) == EntrySnapshot())
        let stretched = PersistedEntryState(open: true, validUntil: wall + .seconds(1_000_000))
        #expect(stretched.resumed(monotonicNow: t0, wallNow: wall, config: config).validUntil == t0 + .seconds(600))
    }

    @Test func aSnapshotGoesToTheWallClockAndBack() {
        let snapshot = EntrySnapshot(
            failures: 1, rounds: 2, lockoutEnd: t0 + .seconds(100), lockoutSeconds: 120,
            open: true, validUntil: t0 + .seconds(300))
        let stored = PersistedEntryState(snapshot, monotonicNow: t0, wallNow: wall)
        #expect(stored.lockoutEnd == wall + .seconds(100))
        let later = Instant(nanoseconds: 99_000_000_000)
        let resumed = stored.resumed(monotonicNow: later, wallNow: wall + .seconds(40), config: EntryConfig())
        #expect(
            resumed
                == EntrySnapshot(
                    failures: 1, rounds: 2, lockoutEnd: later + .seconds(60), lockoutSeconds: 120,
                    open: true, validUntil: later + .seconds(260)))
    }
}
