package web

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"waitingroom/server/queue"
	"waitingroom/server/roomsync"
)

// The shipped dashboard and alert rules, relative to this package.
const (
	dashboardFile  = "../docs/grafana-dashboard.json"
	alertsFile     = "../docs/alerts.yml"
	alertTestsFile = "../docs/alerts_test.yml"
)

// exportedNames returns every series name /metrics can export: each
// collector is fed once so that its families show, and histograms and
// summaries add their _bucket, _sum and _count series.
func exportedNames(t *testing.T) map[string]bool {
	t.Helper()
	m := NewMetrics()
	m.CountRedisCommands(func() int64 { return 1 })
	m.CountDB(func() sql.DBStats { return sql.DBStats{} })
	m.WatchReadiness(func(context.Context) roomsync.Report {
		return roomsync.Report{Checks: map[string]string{roomsync.CheckRedis: roomsync.OK, roomsync.CheckDatabase: roomsync.OK}}
	})
	m.Ticked("sale", queue.Admission{Phase: queue.PhaseOpen}, time.Millisecond, nil)
	m.ObserveOrder("sale", OrderPlaced, time.Millisecond)
	m.ObserveOrder("sale", "sold_out", time.Millisecond)
	m.Adapted("sale", "increase", 10, 15)
	m.HTTPResponses.WithLabelValues("GET /healthz", "200").Inc()
	m.Rejected.WithLabelValues("idle_conns").Inc()
	m.EnterDuration.Observe(0.001)
	m.FanoutDuration.Observe(0.001)
	mfs, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, mf := range mfs {
		n := mf.GetName()
		names[n] = true
		switch mf.GetType() {
		case dto.MetricType_HISTOGRAM:
			names[n+"_bucket"], names[n+"_sum"], names[n+"_count"] = true, true, true
		case dto.MetricType_SUMMARY:
			names[n+"_sum"], names[n+"_count"] = true, true
		}
	}
	return names
}

var (
	promqlStrings  = regexp.MustCompile("\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'|`[^`]*`")
	promqlMatchers = regexp.MustCompile(`\{[^}]*\}|\[[^\]]*\]`)
	promqlGrouping = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	grafanaVars    = regexp.MustCompile(`\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*`)
	promqlToken    = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*|[0-9][0-9A-Za-z_.]*`)
	promqlKeywords = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true,
		"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
		"inf": true, "nan": true, "Inf": true, "NaN": true}
)

// metricNames returns the metric names a PromQL expression selects: the
// identifiers left once strings, label matchers, ranges, groupings,
// Grafana variables, functions, keywords and numbers are taken out.
func metricNames(expr string) []string {
	expr = promqlStrings.ReplaceAllString(expr, " ")
	expr = grafanaVars.ReplaceAllString(expr, " ")
	expr = promqlMatchers.ReplaceAllString(expr, " ")
	expr = promqlGrouping.ReplaceAllString(expr, " ")
	var out []string
	for _, at := range promqlToken.FindAllStringIndex(expr, -1) {
		tok := expr[at[0]:at[1]]
		function := strings.HasPrefix(strings.TrimLeft(expr[at[1]:], " \t\n"), "(")
		if tok[0] >= '0' && tok[0] <= '9' || function || promqlKeywords[tok] {
			continue
		}
		out = append(out, tok)
	}
	return out
}

func TestMetricNamesOfPromQL(t *testing.T) {
	for _, tt := range []struct{ expr, want string }{
		{`sum by (room) (rate(a_total{room=~"$room",x="b c"}[$__rate_interval]))`, "a_total"},
		{`histogram_quantile(0.95, sum by (le) (rate(d_bucket[5m]))) > 1e3`, "d_bucket"},
		{"x == 0 and on (room) (max by (room) (y{phase=\"open\"}) == 1) or z offset 5m", "x y z"},
		{`max without (instance) (${DS}w) / ignoring(code) group_left v`, "w v"},
	} {
		if got := strings.Join(metricNames(tt.expr), " "); got != tt.want {
			t.Errorf("metricNames(%q) = %q, want %q", tt.expr, got, tt.want)
		}
	}
}

// checkExpr fails the test for a metric of expr that /metrics does not
// export, and for an expression that selects no metric at all.
func checkExpr(t *testing.T, where, expr string, names map[string]bool) {
	t.Helper()
	got := metricNames(expr)
	if len(got) == 0 {
		t.Errorf("%s: %q selects no metric", where, expr)
	}
	for _, n := range got {
		if !names[n] {
			t.Errorf("%s: %q uses %s, which web/metrics.go does not export", where, expr, n)
		}
	}
}

type grafanaPanel struct {
	ID         int               `json:"id"`
	Type       string            `json:"type"`
	Title      string            `json:"title"`
	Datasource map[string]string `json:"datasource"`
	Targets    []struct {
		Expr       string            `json:"expr"`
		Datasource map[string]string `json:"datasource"`
	} `json:"targets"`
	Panels []grafanaPanel `json:"panels"`
}

// TestGrafanaDashboard: the dashboard is importable (a Prometheus
// datasource input, schemaVersion 39) and every panel's queries use only
// metrics that /metrics exports, so it cannot drift from web/metrics.go.
func TestGrafanaDashboard(t *testing.T) {
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Inputs []struct {
			Name, Type, PluginID string
		} `json:"__inputs"`
		SchemaVersion int            `json:"schemaVersion"`
		UID           string         `json:"uid"`
		Panels        []grafanaPanel `json:"panels"`
		Templating    struct {
			List []struct {
				Name  string `json:"name"`
				Query struct {
					Query string `json:"query"`
				} `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s is not JSON: %v", dashboardFile, err)
	}
	if len(d.Inputs) != 1 || d.Inputs[0].Name != "DS_PROMETHEUS" || d.Inputs[0].Type != "datasource" {
		t.Errorf("inputs %+v, want one DS_PROMETHEUS datasource", d.Inputs)
	}
	if d.SchemaVersion < 36 || d.UID == "" {
		t.Errorf("schemaVersion %d, uid %q: want a current schema and a uid", d.SchemaVersion, d.UID)
	}
	names := exportedNames(t)
	for _, v := range d.Templating.List {
		q, ok := strings.CutPrefix(v.Query.Query, "label_values(")
		if !ok {
			t.Errorf("variable %s: query %q, want label_values(metric, label)", v.Name, v.Query.Query)
			continue
		}
		checkExpr(t, "variable "+v.Name, strings.Split(q, ",")[0], names)
	}
	ids := map[int]bool{}
	queries := 0
	var walk func([]grafanaPanel)
	walk = func(ps []grafanaPanel) {
		for _, p := range ps {
			if ids[p.ID] {
				t.Errorf("panel id %d is used twice", p.ID)
			}
			ids[p.ID] = true
			walk(p.Panels)
			if p.Type == "row" {
				continue
			}
			if p.Datasource["uid"] != "${DS_PROMETHEUS}" || len(p.Targets) == 0 {
				t.Errorf("panel %q: datasource %v, %d queries", p.Title, p.Datasource, len(p.Targets))
			}
			for _, q := range p.Targets {
				queries++
				checkExpr(t, "panel "+p.Title, q.Expr, names)
			}
		}
	}
	walk(d.Panels)
	// The panels the issue asks for, by the metric each needs.
	all := string(b)
	for _, want := range []string{"waitingroom_waiting", "waitingroom_admitted_total", "waitingroom_orders_placed_total",
		"waitingroom_order_duration_seconds_bucket", "waitingroom_orders_failed_total", `code=~\"5..\"`,
		"waitingroom_sse_connections", "waitingroom_redis_up", "waitingroom_db_up"} {
		if !strings.Contains(all, want) {
			t.Errorf("the dashboard has no panel on %s", want)
		}
	}
	if queries < 10 {
		t.Errorf("%d queries in the dashboard, want its panels", queries)
	}
}

// alertExprs returns each alert's name and expression from a rules file
// written as docs/alerts.yml is: one "- alert:" per rule, its "expr:" on
// one line or as a block scalar (| or >) below it. promtool checks the
// file itself; this reads enough of it to check the metric names.
func alertExprs(t *testing.T, text string) map[string]string {
	t.Helper()
	out := map[string]string{}
	lines := strings.Split(text, "\n")
	alert := ""
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimSpace(lines[i])
		if name, ok := strings.CutPrefix(trimmed, "- alert:"); ok {
			alert = strings.TrimSpace(name)
			continue
		}
		v, ok := strings.CutPrefix(trimmed, "expr:")
		if !ok {
			continue
		}
		if alert == "" || out[alert] != "" {
			t.Fatalf("line %d: an expr outside an alert rule", i+1)
		}
		v = strings.TrimSpace(v)
		if strings.HasPrefix(v, "|") || strings.HasPrefix(v, ">") {
			indent := len(lines[i]) - len(strings.TrimLeft(lines[i], " "))
			var block []string
			for i+1 < len(lines) && (strings.TrimSpace(lines[i+1]) == "" || len(lines[i+1])-len(strings.TrimLeft(lines[i+1], " ")) > indent) {
				i++
				block = append(block, lines[i])
			}
			v = strings.Join(block, "\n")
		}
		out[alert] = v
	}
	return out
}

// TestAlertRules: the rules cover what the issue names, each says what
// to do (summary and description), and use only metrics /metrics
// exports; promtool checks the file and runs docs/alerts_test.yml.
func TestAlertRules(t *testing.T) {
	b, err := os.ReadFile(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	exprs := alertExprs(t, string(b))
	for _, want := range []string{"WaitingroomOrderLatencyOverBudget", "WaitingroomHTTP5xxRate", "WaitingroomRedisDown",
		"WaitingroomDatabaseDown", "WaitingroomAdmissionStalled"} {
		if exprs[want] == "" {
			t.Errorf("%s has no rule %s", alertsFile, want)
		}
	}
	if n := strings.Count(string(b), "- alert:"); n != len(exprs) ||
		strings.Count(string(b), "summary:") != n || strings.Count(string(b), "description:") != n {
		t.Errorf("%d alerts, %d exprs read, %d summaries, %d descriptions: want one of each per alert",
			n, len(exprs), strings.Count(string(b), "summary:"), strings.Count(string(b), "description:"))
	}
	names := exportedNames(t)
	for alert, expr := range exprs {
		checkExpr(t, "alert "+alert, expr, names)
	}

	promtool, err := exec.LookPath("promtool")
	if err != nil {
		msg := "promtool is not installed (Debian package prometheus): docs/alerts.yml is NOT checked"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip("SKIPPING: " + msg + " (CI=true makes this a failure)")
	}
	for _, args := range [][]string{{"check", "rules", alertsFile}, {"test", "rules", alertTestsFile}} {
		out, err := exec.Command(promtool, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
