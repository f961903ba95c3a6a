package app

import (
	"log/slog"

	"waitingroom/server/config"
	"waitingroom/server/pass"
)

// passKeys returns the keys that sign the gate passes: PASS_SIGNING_KEY
// (and PASS_SIGNING_KEY_PREVIOUS) when set, else a key derived from
// secret, the SECRET_KEY, which every instance sharing it derives alike.
func passKeys(cfg config.Config, secret []byte, log *slog.Logger) (*pass.Keys, error) {
	if cfg.PassSigningKey != "" {
		k, err := pass.Load(cfg.PassSigningKey, cfg.PassSigningKeyPrevious)
		if err != nil {
			return nil, err
		}
		log.Info("gate passes signed with PASS_SIGNING_KEY", "kid", k.KeyID(), "previous", cfg.PassSigningKeyPrevious != "")
		return k, nil
	}
	k, err := pass.Derive(secret)
	if err != nil {
		return nil, err
	}
	log.Info("PASS_SIGNING_KEY is empty: gate passes are signed with a key derived from SECRET_KEY; set PASS_SIGNING_KEY to rotate it on its own", "kid", k.KeyID())
	return k, nil
}
