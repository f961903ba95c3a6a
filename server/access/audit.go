package access

// What the audit log keeps of codes: their counts, lines, uses and hints,
// never a code.

// Audit returns what the audit log keeps of code i.
func (i Info) Audit() map[string]any {
	return map[string]any{"hint": i.Hint, "line": i.Line, "uses": i.Uses, "used": i.Used}
}

// Audit returns what the audit log keeps of codes added under spec.
func (a Added) Audit(spec Spec) map[string]any {
	return map[string]any{"added": a.Added, "skipped": a.Skipped, "line": spec.Line, "uses": spec.Uses, "expiresAt": spec.ExpiresAt}
}
