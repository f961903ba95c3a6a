package room

import (
	"errors"
	"fmt"
)

// ErrInvalid is what every refusal of the room's rules is:
// errors.Is(err, ErrInvalid) holds for a *FieldError.
var ErrInvalid = errors.New("invalid room settings")

// FieldError is a setting that the room's rules refuse. Settings.Validate
// and the checks it calls return one for the first invalid field.
type FieldError struct {
	// Field is the setting's JSON name, which is also its form field's
	// ("rate", "prequeueAt", "targetURL"…), or "schedule" for a schedule
	// time out of range.
	Field string
	// Reason is the rule's words, which name the field; it is the error's
	// text.
	Reason string
	// Err is the cause, when another package's check refused the value
	// (an *egress.RefusedError for a healthURL host).
	Err error
}

func (e *FieldError) Error() string { return e.Reason }

// Unwrap returns the cause, if any.
func (e *FieldError) Unwrap() error { return e.Err }

// Is reports ErrInvalid.
func (e *FieldError) Is(target error) bool { return target == ErrInvalid }

// fieldError returns the *FieldError of field, whose reason is format and
// args as fmt.Errorf writes them; a %w verb's error is its cause.
func fieldError(field, format string, args ...any) *FieldError {
	err := fmt.Errorf(format, args...)
	return &FieldError{Field: field, Reason: err.Error(), Err: errors.Unwrap(err)}
}
