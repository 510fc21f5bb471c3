import Testing

@Test func placeholder_HALMockTests() { #expect(Bool(true)) }
