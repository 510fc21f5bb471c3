import HAL

/// Which keys do what apart from the code entry: the keys that press Send/Resend. A keypad alone
/// can run the whole device by binding a letter key; the single button stays bound by default.
public struct KeyBindings: Hashable, Sendable {
    /// Keys that act as the Send/Resend button.
    public var send: [Key]

    public init(send: [Key] = [.button]) {
        self.send = send
    }

    /// Digits, `*` and `#` belong to the code entry and cannot be bound; empty when all is well.
    public var problems: [String] {
        var found: [String] = []
        for key in send where key.digitValue != nil || key == .star || key == .pound {
            found.append(
                "the send key cannot be '" + String(decoding: [key.symbol], as: UTF8.self)
                    + "': digits, * and # are for the code (allowed: A, B, C, D or the button)")
        }
        return found
    }
}

/// What the loop must do: the resend controller's actions (never `.show`), the entry flow's
/// actions, the button's debounced changes (for the log), and the merged screen.
public enum DeviceAction: Hashable, Sendable {
    /// Show this frame (the controller's and the entry flow's merged); only when it changed.
    case show(ScreenText)
    case controller(ControllerAction)
    case entry(EntryAction)
    /// The single button's debounced level changed (for the log). Keypad keys are never reported:
    /// a key's identity may be a digit of the code.
    case buttonChanged(DebouncedChange)
}

/// The one coordinator of the device: routes keys (every key through the
/// `KeyDebouncer`; a key bound to Send/Resend presses the `ResendController`, the others go to the
/// `CodeEntry` when there is one and are dropped when not), opens the field when a send succeeded
/// (or at an accepted press when no send command is configured), and merges the two machines'
/// screens into one:
///
/// - no code entry (the single-button device), or nothing to enter (before the first send, after
///   an accepted code): the controller's frame, unchanged;
/// - 2 rows: line 1 the entry's `compact` line, line 2 the controller's label ("Resend (NN)"); the
///   success screen takes both lines;
/// - 4 rows: lines 1-2 the controller's, line 3 the entry's status, line 4 its field.
///
/// The controller's behaviour does not depend on a code entry: every input reaches it unchanged.
public struct DeviceCoordinator {
    public private(set) var controller: ResendController
    /// The code-entry flow; nil on a device without a keypad.
    public private(set) var entry: CodeEntry?
    public private(set) var keys: KeyDebouncer
    public let bindings: KeyBindings

    /// The controller's last frame, and the merged frame last shown.
    private var controllerFrame: ScreenText?
    private var shownFrame: ScreenText?
    /// The latest instant fed to the machines: their inputs never go back in time.
    private var time: Instant = .origin
    /// A key reached the entry flow since the last `finish`: the frame answers it, so it carries
    /// the field's cursor as its focus.
    private var keyed = false

    /// - Parameters:
    ///   - entry: the code-entry flow; nil for the single-button device.
    ///   - keys: the key debouncer (the button's own `Debouncer` set with `KeyDebouncer.use`).
    public init(controller: ResendController, entry: CodeEntry? = nil, keys: KeyDebouncer = KeyDebouncer(), bindings: KeyBindings = KeyBindings()) {
        precondition(bindings.problems.isEmpty, "DeviceCoordinator: invalid key bindings")
        self.controller = controller
        self.entry = entry
        self.keys = keys
        self.bindings = bindings
    }

    /// The latest instant fed to the controller (a press is stamped when it became certain, which
    /// may be a little before the loop's `now`); never goes backwards.
    public var controllerTime: Instant { time }

    /// The earliest instant anything needs `advance(to:)`; nil when idle.
    public var nextDeadline: Instant? {
        earliest(earliest(keys.nextDeadline, controller.nextDeadline), entry?.nextDeadline)
    }

    /// Starts both machines (fresh, or from clamped snapshots). Call once, first.
    public mutating func start(
        now: Instant, restoring restored: ControllerSnapshot? = nil,
        entry restoredEntry: EntrySnapshot? = nil
    ) -> [DeviceAction] {
        time = now
        var actions = take(controller.start(now: now, restoring: restored))
        actions += withEntry { $0.start(now: now, restoring: restoredEntry) }
        return finish(actions)
    }

    /// A raw key event from a backend (not yet debounced).
    public mutating func feed(_ event: KeyEvent, now: Instant) -> [DeviceAction] {
        var actions: [DeviceAction] = []
        for change in keys.feed(event) { actions += route(change, now: now) }
        return finish(actions)
    }

    /// A read of `key`'s level (`KeyDebouncer.reconcile`): repairs lost events.
    public mutating func reconcile(_ key: Key, level: ButtonLevel, now: Instant) -> [DeviceAction] {
        var actions: [DeviceAction] = []
        for change in keys.reconcile(key, level: level) { actions += route(change, now: now) }
        return finish(actions)
    }

    /// A request from outside (`RemoteCommand`): `send` is a press of Send/Resend (accepted when
    /// a press would be); `open` pulses the output line as an accepted code does and
    /// `resetLockout` ends the code entry's lockout (both with a code entry only; nothing
    /// otherwise).
    public mutating func remote(_ command: RemoteCommand, now: Instant) -> [DeviceAction] {
        time = max(time, now)
        switch command {
        case .send:
            return finish(take(controller.press(now: time)))
        case .open:
            return entryInput { entry, now in entry.openRemotely(now: now) }
        case .resetLockout:
            return entryInput { entry, now in entry.resetLockout(now: now) }
        }
    }

    /// The send command ended.
    public mutating func sendFinished(_ outcome: CommandOutcome, now: Instant) -> [DeviceAction] {
        time = max(time, now)
        return finish(take(controller.sendFinished(outcome, now: time)))
    }

    /// True when each send needs a code made on the device (`issueCode` before the send command).
    public var issuesCodes: Bool { entry?.config.codeMadeOnDevice ?? false }

    /// A new code for the send about to start (`CodeEntry.issueCode`); only when `issuesCodes`.
    public mutating func issueCode<Random: RandomSource>(from random: inout Random) throws(HALError) -> SecretCode {
        guard issuesCodes, var current = entry else { preconditionFailure("DeviceCoordinator: issueCode without a code made on the device") }
        entry = nil  // no second reference while it changes (copy on write)
        defer { entry = current }
        return try current.issueCode(from: &random)
    }

    /// The verify command ended (ignored without a code entry).
    public mutating func verifyFinished(_ outcome: VerifyOutcome, now: Instant) -> [DeviceAction] {
        time = max(time, now)
        return entryInput { entry, now in entry.verifyFinished(outcome, now: now) }
    }

    /// The keys' changes due at `now` (the first part of `advance(to:)`, for a loop that serves
    /// its command runners between the keys and the machines' deadlines).
    public mutating func advanceKeys(to now: Instant) -> [DeviceAction] {
        var actions: [DeviceAction] = []
        for change in keys.advance(to: now) { actions += route(change, now: now) }
        return finish(actions)
    }

    /// The loop carried out the `persist` actions of one batch (the controller's and the entry's:
    /// one state file) at `now`: `written` is true when every write succeeded. Fails closed: the
    /// entry flow runs a submitted code's check only after its try was written, and closes code
    /// entry while writes fail (`CodeEntry.stateWritten`). Nothing without a code entry.
    public mutating func stateWritten(_ written: Bool, now: Instant) -> [DeviceAction] {
        time = max(time, now)
        return entryInput { entry, now in entry.stateWritten(written, now: now) }
    }

    /// The clock reached `nextDeadline` (or later).
    public mutating func advance(to now: Instant) -> [DeviceAction] {
        var actions: [DeviceAction] = []
        for change in keys.advance(to: now) { actions += route(change, now: now) }
        time = max(time, now)
        actions += take(controller.advance(to: time))
        let time = time
        actions += withEntry { $0.advance(to: time) }
        return finish(actions)
    }

    /// Stops both: the controller's stopped screen, the output line inactive.
    public mutating func stop(now: Instant) -> [DeviceAction] {
        time = max(time, now)
        var actions = entry?.stop(now: time).map { DeviceAction.entry($0) } ?? []
        actions += take(controller.stop(now: time))
        return finish(actions)
    }

    /// A debounced key change: to the controller when bound to Send, else to the entry flow.
    private mutating func route(_ change: KeyEvent, now: Instant) -> [DeviceAction] {
        // Stamped when it became certain, which may be a little before `now` when the loop ran late.
        time = max(time, min(change.at, now))
        var actions: [DeviceAction] = []
        if change.key == .button { actions.append(.buttonChanged(DebouncedChange(pressed: change.isPress, time: change.at))) }
        if bindings.send.contains(change.key) {
            guard change.isPress else { return actions }
            return actions + take(controller.press(now: time))
        }
        guard entry != nil else { return actions }
        keyed = true
        let time = time
        return actions + withEntry { $0.key(change, now: time) }
    }

    /// The controller's actions: its frame is kept for merging; a successful send (or an accepted
    /// press without a send command) opens the code field.
    private mutating func take(_ actions: [ControllerAction]) -> [DeviceAction] {
        var out: [DeviceAction] = []
        var sent = false
        var sending = false
        for action in actions {
            switch action {
            case .show(let frame):
                controllerFrame = frame
                continue
            case .log(.sendFinished(let outcome, _, superseded: false)) where outcome.succeeded:
                sent = true
            case .log(.pressAccepted):
                if controller.config.hasSendCommand { sending = true } else { sent = true }
            default:
                break
            }
            out.append(.controller(action))
        }
        let time = time
        if sending { out += withEntry { $0.sendStarted(now: time) } }
        if sent { out += withEntry { $0.codeSent(now: time) } }
        return out
    }

    /// One input for the code entry alone, at `time` (already moved on): `input` hands it to the
    /// entry; its actions, finished like every batch. Nothing without a code entry.
    private mutating func entryInput(_ input: (inout CodeEntry, Instant) -> [EntryAction]) -> [DeviceAction] {
        guard entry != nil else { return [] }
        let now = time
        return finish(withEntry { input(&$0, now) })
    }

    /// `body` run on the code entry, its actions as the device's; nothing without a code entry.
    private mutating func withEntry(_ body: (inout CodeEntry) -> [EntryAction]) -> [DeviceAction] {
        guard var current = entry else { return [] }
        entry = nil  // no second reference while it changes (copy on write)
        let actions = body(&current)
        entry = current
        return actions.map { .entry($0) }
    }

    /// Appends the merged frame when its text changed. A frame that answers a key carries the
    /// field's cursor as its focus, so a display writes the key's echo before the rest (the
    /// message line it replaces, the countdown): the echo lands within debounce + 2 ms.
    private mutating func finish(_ actions: [DeviceAction]) -> [DeviceAction] {
        let answersKey = keyed
        keyed = false
        guard var frame = mergedFrame, frame.lines != shownFrame?.lines else { return actions }
        if answersKey { frame.focus = focus }
        shownFrame = frame
        return actions + [.show(frame)]
    }

    /// Where the field's cursor is on the merged screen; nil when the field is not shown or takes
    /// no keys.
    public var focus: ScreenCell? {
        guard controllerFrame != nil, let view = entry?.view, let column = view.cursor else { return nil }
        let layout = controller.config.layout
        guard column < layout.columns else { return nil }
        if layout.rows >= 4 { return ScreenCell(row: 3, column: column) }
        if !view.fullScreen && view.compact == view.field { return ScreenCell(row: 0, column: column) }
        return nil
    }

    /// The screen: see the type's documentation.
    public var mergedFrame: ScreenText? {
        guard let base = controllerFrame else { return nil }
        guard let view = entry?.view else { return base }
        let layout = controller.config.layout
        var lines = base.lines
        if layout.rows >= 4 {
            lines[2] = layout.fit(view.status)
            lines[3] = layout.fit(view.field)
        } else if view.fullScreen {
            lines[0] = layout.fit(view.status)
            lines[1] = layout.fit(view.field)
        } else {
            lines[0] = layout.fit(view.compact)
        }
        return ScreenText(lines: lines)
    }
}
