import Testing

@Test func placeholder_ResendCoreTests() { #expect(Bool(true)) }
