import Glibc
import HAL
import HALLinux
import Testing

/// A connected pair of stream sockets, closed when it goes away.
private final class SocketPair {
    let near: Int32
    private(set) var far: Int32

    init() {
        var fds: [Int32] = [-1, -1]
        precondition(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0, "socketpair failed")
        near = fds[0]
        far = fds[1]
    }

    func closeFar() {
        _ = close(far)
        far = -1
    }

    deinit {
        _ = close(near)
        if far >= 0 { _ = close(far) }
    }
}

/// What a test connection was told, in order.
private final class Calls {
    var ready: [PollReadiness] = []
    var services: [Instant] = []
}

@Suite("the Linux event source: a polled connection (a network client's socket)", .timeLimit(.minutes(1)))
struct PolledConnectionTests {
    @Test("a connection that wants to write is polled for writing; one that does not is not woken by a writable socket")
    func writable() throws {
        var source = try LinuxEventSource(button: nil)
        let pair = SocketPair()
        let calls = Calls()
        var wantsWrite = false
        source.register(
            connection: PolledConnection(
                descriptor: { pair.near }, wantsWrite: { wantsWrite }, nextService: { nil },
                onReady: { readiness, _ in
                    calls.ready.append(readiness); return []
                }, service: { _ in [] }))
        // An idle socket: nothing to read, and writing is not asked for.
        #expect(try source.wait(until: .origin) == [])
        #expect(calls.ready.isEmpty)
        wantsWrite = true
        #expect(try source.wait(until: .origin) == [])
        #expect(calls.ready == [PollReadiness(readable: false, writable: true)])
    }

    @Test("a readable connection runs its handler and returns its inputs; a peer that hangs up is reported as hung up")
    func readableAndHangUp() throws {
        var source = try LinuxEventSource(button: nil)
        let pair = SocketPair()
        let calls = Calls()
        source.register(
            connection: PolledConnection(
                descriptor: { pair.near }, wantsWrite: { false }, nextService: { nil },
                onReady: { readiness, _ in
                    calls.ready.append(readiness)
                    var buffer = [UInt8](repeating: 0, count: 16)
                    _ = read(pair.near, &buffer, buffer.count)
                    return [.remote(.send)]
                }, service: { _ in [] }))
        #expect(write(pair.far, "x", 1) == 1)
        #expect(try source.wait(until: nil) == [.remote(.send)])
        #expect(calls.ready == [PollReadiness(readable: true, writable: false)])
        pair.closeFar()
        #expect(try source.wait(until: nil) == [.remote(.send)])
        #expect(calls.ready.last == PollReadiness(readable: true, writable: false, hungUp: true))
    }

    @Test("a connection's own deadline is served without ending the wait; the wait ends at its own deadline")
    func ownDeadline() throws {
        var source = try LinuxEventSource(button: nil)
        let clock = SystemClock()
        let calls = Calls()
        var due: Instant? = clock.now() + .milliseconds(10)
        source.register(
            connection: PolledConnection(
                descriptor: { nil }, wantsWrite: { false }, nextService: { due },
                onReady: { _, _ in [] },
                service: { now in
                    calls.services.append(now); due = nil; return []
                }))
        let deadline = clock.now() + .milliseconds(40)
        #expect(try source.wait(until: deadline) == [])
        #expect(calls.services.count == 1)
        #expect(clock.now() >= deadline)
        #expect(calls.services.first.map { $0 < deadline } == true)
    }

    @Test("a connection's service that brings an input ends the wait at once")
    func serviceInput() throws {
        var source = try LinuxEventSource(button: nil)
        let clock = SystemClock()
        var due: Instant? = clock.now() + .milliseconds(5)
        source.register(
            connection: PolledConnection(
                descriptor: { nil }, wantsWrite: { false }, nextService: { due },
                onReady: { _, _ in [] },
                service: { _ in
                    due = nil; return [.remote(.resetLockout)]
                }))
        #expect(try source.wait(until: nil) == [.remote(.resetLockout)])
    }
}
