package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"waitingroom/server/adapt"
	"waitingroom/server/egress"
	"waitingroom/server/room"
)

// HealthProbe reads a room's healthURL for the adaptive controller
// (adapt.HealthProbe): one GET, at most adapt.HealthTimeout, never to an
// address package egress refuses, no redirect followed, at most healthBodyMax bytes read, http and https only. The
// answer is a JSON object with a numeric "load" field, or Prometheus text
// exposition with a gauge (or untyped sample) named waitingroom_load or
// load (the highest of its series); 1 or more means overloaded.
type HealthProbe struct {
	client *http.Client
}

// healthBodyMax bounds the answer read from a healthURL.
const healthBodyMax = 64 << 10

// healthLoadNames are the Prometheus metrics that give the load, in the
// order they are looked for.
var healthLoadNames = []string{"waitingroom_load", "load"}

// NewHealthProbe returns a HealthProbe with a client of its own: bounded
// dials that never reach an address package egress refuses, no proxy
// from the environment, no redirects.
func NewHealthProbe() *HealthProbe {
	t := &http.Transport{
		DialContext:           (&net.Dialer{Timeout: adapt.HealthTimeout, Control: egress.Control}).DialContext,
		TLSHandshakeTimeout:   adapt.HealthTimeout,
		ResponseHeaderTimeout: adapt.HealthTimeout,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       30 * time.Second,
	}
	return &HealthProbe{client: &http.Client{Transport: t, Timeout: adapt.HealthTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// Load GETs healthURL and returns its load figure. Its errors never
// carry the URL (its query may hold a secret).
func (p *HealthProbe) Load(ctx context.Context, healthURL string) (float64, error) {
	if healthURL == "" || !room.ValidHealthURL(healthURL) {
		return 0, errors.New("health: not an absolute http(s) URL")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, healthURL, nil)
	if err != nil {
		return 0, errors.New("health: not an absolute http(s) URL")
	}
	if err := egress.CheckHost(req.URL.Hostname()); err != nil {
		return 0, fmt.Errorf("health: %w", err)
	}
	req.Header.Set("Accept", "application/json, text/plain;version=0.0.4;q=0.5")
	resp, err := p.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, fmt.Errorf("health: get: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		if resp.StatusCode >= 300 && resp.StatusCode < 400 {
			return 0, fmt.Errorf("health: status %d: redirects are not followed", resp.StatusCode)
		}
		return 0, fmt.Errorf("health: status %d", resp.StatusCode)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, healthBodyMax+1))
	if err != nil {
		return 0, fmt.Errorf("health: read: %w", err)
	}
	if len(b) > healthBodyMax {
		return 0, fmt.Errorf("health: answer over %d bytes", healthBodyMax)
	}
	return parseLoad(b)
}

// parseLoad reads a load figure from a JSON object ({"load": 0.7, …}) or
// Prometheus text exposition (load 0.7).
func parseLoad(b []byte) (float64, error) {
	var load float64
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' {
		var v struct {
			Load *float64 `json:"load"`
		}
		if err := json.Unmarshal(t, &v); err != nil {
			return 0, fmt.Errorf("health: JSON: %w", err)
		}
		if v.Load == nil {
			return 0, errors.New(`health: the JSON object has no numeric "load"`)
		}
		load = *v.Load
	} else {
		parser := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := parser.TextToMetricFamilies(bytes.NewReader(b))
		if err != nil {
			return 0, fmt.Errorf("health: neither a JSON object nor Prometheus text: %w", err)
		}
		if load, err = promLoad(fams); err != nil {
			return 0, err
		}
	}
	if math.IsNaN(load) || math.IsInf(load, 0) || load < 0 {
		return 0, fmt.Errorf("health: load %g: want a finite figure, 0 or more", load)
	}
	return load, nil
}

// promLoad is the highest sample of the first of healthLoadNames that
// fams hold, a gauge or untyped.
func promLoad(fams map[string]*dto.MetricFamily) (float64, error) {
	for _, name := range healthLoadNames {
		f, ok := fams[name]
		if !ok {
			continue
		}
		if f.GetType() != dto.MetricType_GAUGE && f.GetType() != dto.MetricType_UNTYPED {
			return 0, fmt.Errorf("health: %s is a %s, want a gauge", name, f.GetType())
		}
		load, found := math.Inf(-1), false
		for _, m := range f.GetMetric() {
			v := m.GetUntyped().GetValue()
			if f.GetType() == dto.MetricType_GAUGE {
				v = m.GetGauge().GetValue()
			}
			load, found = max(load, v), true
		}
		if found {
			return load, nil
		}
	}
	return 0, errors.New("health: no waitingroom_load or load gauge")
}
