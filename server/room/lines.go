package room

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"

	"waitingroom/server/line"
)

// A room's named lines: each takes a share of the room's admission rate
// and says who may join it. A room without lines has one unnamed line.

// Line is one of a room's named lines.
type Line struct {
	// Name names the line (line.ValidName, not empty), unique in the room.
	Name string `json:"name"`
	// Share is the line's part of the room's rate, above 0 and at most 1;
	// the room's lines' shares add up to 1.
	Share float64 `json:"share"`
	// Access is who may join the line: LineOpen ("" means it), LineCode
	// (an access code of the line's) or LineIdentity (a verified identity
	// of the shop's).
	Access string `json:"access"`
}

// ErrLineInUse refuses a change of a room's lines that would rename or
// remove a line that still has people in it: each line keeps its name
// and its place in the list until it is empty.
var ErrLineInUse = errors.New("room: a line in use keeps its name and place")

// MaxLines is the most lines a room has.
const MaxLines = 4

// The values of Line.Access.
const (
	LineOpen     = "open"
	LineCode     = "code"
	LineIdentity = "identity"
)

// maxShareError is how far from 1 the lines' shares may add up.
const maxShareError = 0.001

// NeedsCode reports whether joining the line takes an access code.
func (l Line) NeedsCode() bool { return l.Access == LineCode }

// NeedsIdentity reports whether joining the line takes a verified
// identity.
func (l Line) NeedsIdentity() bool { return l.Access == LineIdentity }

// NormalizeLines returns lines with their access spelled out ("" is
// LineOpen), as a new slice; none is nil.
func NormalizeLines(lines []Line) []Line {
	if len(lines) == 0 {
		return nil
	}
	out := make([]Line, len(lines))
	for i, l := range lines {
		if l.Access == "" {
			l.Access = LineOpen
		}
		out[i] = l
	}
	return out
}

// LineIndex returns the index of the room's line called name. A room
// without lines has one, whose name is "".
func (s Settings) LineIndex(name string) (int, bool) {
	if len(s.Lines) == 0 {
		return 0, name == ""
	}
	for i, l := range s.Lines {
		if l.Name == name {
			return i, true
		}
	}
	return 0, false
}

// SharesError is the cause of the *FieldError of lines whose shares do not
// add up to 1.
type SharesError struct {
	// Sum is what the shares add up to.
	Sum float64
}

func (e *SharesError) Error() string {
	return "the lines' shares must add up to 1; they add up to " + FormatShare(e.Sum)
}

// FormatShare writes a share, or a sum of shares, rounded to the millionth
// so that float sums read as typed (0.7+0.2 is 0.9).
func FormatShare(f float64) string {
	return strconv.FormatFloat(math.Round(f*1e6)/1e6, 'f', -1, 64)
}

// validateLines returns an error that names the first invalid line
// setting: "lines", or "access" for a room-level access that lines
// replace.
func (s Settings) validateLines() error {
	if len(s.Lines) == 0 {
		return nil
	}
	if len(s.Lines) > MaxLines {
		return fieldError("lines", "lines must be at most %d; there are %d", MaxLines, len(s.Lines))
	}
	sum := 0.0
	for i, l := range s.Lines {
		if l.Name == "" || !line.ValidName(l.Name) {
			return fieldError("lines", "lines must each have a name of 1 to %d letters, digits, '-' and '_': line %d's is %q", line.MaxNameLen, i+1, l.Name)
		}
		for _, o := range s.Lines[:i] {
			if o.Name == l.Name {
				return fieldError("lines", "lines must have different names: %q names two", l.Name)
			}
		}
		if !finite(l.Share) || l.Share <= 0 || l.Share > 1 {
			return fieldError("lines", "lines must each have a share above 0 and at most 1: line %q's is %g", l.Name, l.Share)
		}
		sum += l.Share
		switch l.Access {
		case "", LineOpen, LineCode:
		case LineIdentity:
			if !s.TakesIdentity() {
				return fieldError("lines", "lines with access %q need the room's identity to be %q or %q: line %q has it", LineIdentity, IdentityOptional, IdentityRequired, l.Name)
			}
		default:
			return fieldError("lines", "lines must each have access %q, %q or %q: line %q's is %q", LineOpen, LineCode, LineIdentity, l.Name, l.Access)
		}
	}
	if math.Abs(sum-1) > maxShareError {
		e := &SharesError{Sum: sum}
		return &FieldError{Field: "lines", Reason: e.Error(), Err: e}
	}
	if s.Access.Access != "" && s.Access.Access != AccessOpen {
		return fieldError("access", "access must be %q in a room with lines: each line's access says who may join it", AccessOpen)
	}
	return nil
}

// LinesPatch is a patch of Settings.Lines: absent keeps them, null or []
// clears them, a list of lines sets them.
type LinesPatch struct {
	// Set reports that the patch had the field; Lines is its value, nil
	// for null.
	Set   bool
	Lines []Line
}

// UnmarshalJSON reads null or a list of lines, refusing unknown fields.
func (p *LinesPatch) UnmarshalJSON(b []byte) error {
	p.Set = true
	if bytes.Equal(b, []byte("null")) {
		p.Lines = nil
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var lines []Line
	if err := dec.Decode(&lines); err != nil {
		return errors.New(`lines must be null or a list of {"name":…,"share":…,"access":…}`)
	}
	p.Lines = lines
	return nil
}

func (p LinesPatch) apply(lines []Line) []Line {
	if !p.Set {
		return lines
	}
	return NormalizeLines(p.Lines)
}
