package k6

import (
	"strings"
	"testing"
	"time"
)

func TestParseRedisCounters(t *testing.T) {
	tests := []struct {
		name       string
		stats, cpu string
		want       RedisCounters
		wrong      bool
	}{
		{name: "both", stats: "# Commandstats\r\ncmdstat_evalsha:calls=120,usec=9,usec_per_call=0.1,rejected_calls=0,failed_calls=0\r\ncmdstat_hmget:calls=30,usec=1\r\n",
			cpu:  "# CPU\r\nused_cpu_sys:1.500000\r\nused_cpu_user:2.250000\r\nused_cpu_sys_children:9.0\r\n",
			want: RedisCounters{Calls: 150, CPU: 3750 * time.Millisecond}},
		{name: "no commands yet", cpu: "used_cpu_sys:0.5\nused_cpu_user:0.5\n", want: RedisCounters{CPU: time.Second}},
		{name: "no cpu", stats: "cmdstat_get:calls=1,usec=1\n", wrong: true},
		{name: "bad calls", stats: "cmdstat_get:calls=x,usec=1\n", cpu: "used_cpu_sys:0\nused_cpu_user:0\n", wrong: true},
	}
	for _, tt := range tests {
		got, err := ParseRedisCounters(tt.stats, tt.cpu)
		if (err != nil) != tt.wrong || !tt.wrong && got != tt.want {
			t.Errorf("%s: %+v %v, want %+v (error %t)", tt.name, got, err, tt.want, tt.wrong)
		}
	}
}

func TestCostOf(t *testing.T) {
	r0 := RedisCounters{Calls: 1000, CPU: time.Second}
	r1 := RedisCounters{Calls: 31000, CPU: 4 * time.Second}
	u0 := []ProcUsage{{CPU: time.Second}, {CPU: 0}}
	u1 := []ProcUsage{{CPU: 4 * time.Second, RSS: 30 << 20}, {CPU: 1500 * time.Millisecond, RSS: 20 << 20}}
	c := CostOf(30*time.Second, r0, r1, u0, u1)
	c.Rooms, c.Expected, c.Admitted = 1000, 150, []int64{150, 147, 153}
	if c.RedisCallsPerSec != 1000 || c.RedisCPUPct != 10 || c.ServerCPUPct[0] != 10 || c.ServerCPUPct[1] != 5 || c.ServerRSS[1] != 20<<20 {
		t.Fatalf("cost %+v", c)
	}
	if lo, hi := c.AdmissionSpread(); lo != 0.98 || hi != 1.02 {
		t.Fatalf("spread %v..%v, want 0.98..1.02", lo, hi)
	}
	c.SentPerSec, c.TicksPerSec = 12, 4
	out := c.String()
	for _, want := range []string{"1000 rooms", "Redis: 1000 commands/s (1.00 per room), 10.0% of a core; sent by the instances: 12/s; admission ticks: 4.0/s", "instance 2: 5.0% of a core, 20.0 MiB", "98.0%–102.0%"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
}

func TestSumMetric(t *testing.T) {
	text := "# HELP waitingroom_redis_commands_total x\n# TYPE waitingroom_redis_commands_total counter\n" +
		"waitingroom_redis_commands_total{cmd=\"evalsha\"} 120\nwaitingroom_redis_commands_total{cmd=\"get\"} 3.5\n" +
		"waitingroom_redis_commands_total_other 99\nwaitingroom_other 7\n"
	if got := SumMetric(text, "waitingroom_redis_commands_total"); got != 123.5 {
		t.Fatalf("sum %v, want 123.5", got)
	}
	if got := SumMetric("plain 4\n", "plain"); got != 4 {
		t.Fatalf("an unlabelled sample: %v, want 4", got)
	}
}
