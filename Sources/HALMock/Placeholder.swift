// Placeholder until the target gets its first source file.
enum HALMockPlaceholder {}
