package admin

import (
	"encoding/json"
	"strings"

	"waitingroom/server/audit"
	"waitingroom/server/room"
)

// auditedRoom is what the audit log compares of a room: its settings and
// its sold-out flag. The API key's hash is recorded as a short
// fingerprint (keyFingerprint), enough to see that a key was replaced.
type auditedRoom struct {
	room.Settings
	SoldOut bool `json:"soldOut"`
}

func audited(set room.Settings, soldOut bool) auditedRoom {
	set.Gate.APIKeyHash = keyFingerprint(set.Gate.APIKeyHash)
	return auditedRoom{set, soldOut}
}

// keyFingerprint is "" for no API key, else "sha256:" and the first 8
// hex digits of its hash.
func keyFingerprint(hash string) string {
	if len(hash) < 8 {
		return ""
	}
	return "sha256:" + hash[:8]
}

// changeObjects writes changes as two JSON objects of the changed fields:
// their old values and their new ones, such as {"rate":50} and
// {"rate":80}.
func changeObjects(cs []audit.Change) (old, nw string) {
	var o, n strings.Builder
	for i, c := range cs {
		sep := ","
		if i == 0 {
			sep = "{"
		}
		key, _ := json.Marshal(c.Field)
		o.WriteString(sep + string(key) + ":" + jsonOrNull(c.Old))
		n.WriteString(sep + string(key) + ":" + jsonOrNull(c.New))
	}
	if len(cs) == 0 {
		return "", ""
	}
	return o.String() + "}", n.String() + "}"
}

// jsonOrNull is v, a JSON value, or null for a field one side lacks.
func jsonOrNull(v string) string {
	if v == "" {
		return "null"
	}
	return v
}

// CompactJSON is v as compact JSON, "" when it does not marshal.
func CompactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}
