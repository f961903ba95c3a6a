package views

// AdaptDashText are the dashboard's words for adaptive admission. Strings
// with {n}, {min}, {max}, {p95}, {budget}, {v}, {target}, {code} and
// {when} are filled in by the views.
type AdaptDashText struct {
	Heading   string // the section's heading
	RateNow   string // the rate the controller set
	PerSecond string // "{n} per second"
	Why       string // heads the last reason
	Bounds    string // "between {min} and {max} per second"
	// CappedBy replaces the maximum when the order rate caps it: {n}.
	CappedBy string
	BoundsH  string // heads the bounds
	TargetsH string // heads the targets
	Targets  string // "order p95 under {p95}, failures under {budget}"
	LastAt   string // "last decision {when}"
	RateName string // the rate chart's name
	Changes  string // heads the list of changes
	None     string // no change yet
	// The columns of the changes.
	ColTime, ColRate, ColWhy, ColP95, ColErrors string
	// Raised, Cut and Held name a change's direction.
	Raised, Cut, Held string
	// OfTarget is "{v} (target {target})"; OfBudget "{v} (budget
	// {budget}) of {n} orders".
	OfTarget, OfBudget string
	// Reasons explain each reason code (server/adapt's Reasons) in the
	// operator's words; "" is before the first decision.
	Reasons map[string]string
	// OrderCeiling explains hold_max when the room's order rate ({n})
	// caps the controller below maxRate.
	OrderCeiling string
	// UnknownReason names a code without words: {code}.
	UnknownReason string
}

var adaptEN = AdaptDashText{
	Heading:   "Adaptive admission",
	RateNow:   "Rate set by the controller",
	PerSecond: "{n} per second",
	Why:       "Why",
	BoundsH:   "Bounds",
	Bounds:    "between {min} and {max} per second",
	CappedBy:  "{n} (the order rate)",
	TargetsH:  "Targets",
	Targets:   "order p95 under {p95}, failed orders under {budget}",
	LastAt:    "Last decision {when}",
	RateName:  "Controller's rate",
	Changes:   "The controller's recent changes",
	None:      "No change yet: the controller decides once a second and lists here every change of the rate and of its reason.",
	ColTime:   "Time",
	ColRate:   "Rate per second",
	ColWhy:    "Why",
	ColP95:    "Order p95",
	ColErrors: "Failed orders",
	Raised:    "Raised",
	Cut:       "Cut",
	Held:      "Held",
	OfTarget:  "{v} (target {target})",
	OfBudget:  "{v} (budget {budget}) of {n} orders",
	Reasons: map[string]string{
		"":                 "No decision yet: the controller decides once a second.",
		"increase":         "Raised one step: orders are fast (p95 under the target), failures are within the budget, and the line is long enough to use more.",
		"cut_latency":      "Cut: the order p95 is over the target, so the shop is slowing down.",
		"cut_errors":       "Cut: more orders fail than the error budget allows.",
		"cut_health":       "Cut: the shop's health check says it is overloaded.",
		"hold_no_signal":   "Held: too few orders in the last seconds to judge the shop, or its signal could not be read. The rate is never raised blind.",
		"hold_short_line":  "Held: the shop is healthy, but the line is short; a higher rate would let nobody more in.",
		"hold_max":         "Held at the ceiling: the rate is at maxRate.",
		"hold_min":         "Held at the floor: the shop is not healthy, but the rate is already at minRate.",
		"hold_pool":        "Held: the order database's connections are nearly all in use; latency is about to rise.",
		"hold_paused":      "Held: the room is paused, so its orders say nothing about the rate.",
		"bounds":           "Moved inside the bounds: minRate or maxRate changed, or the order rate that caps it.",
		"cut_queue":        "Cut before the target: even the fastest orders waited, and more were let in than the shop completes (its capacity).",
		"probe":            "Let a few buyers in: the rate was 0, so no orders came to tell whether the shop is back.",
		"hold_settle":      "Held: a cut was just taken; it does not show in the orders yet.",
		"hold_drain":       "Held: orders are still slow, but fewer are let in than the shop completes: the backlog drains.",
		"hold_near_target": "Held: the shop is healthy, but its order p95 is close to the target.",
	},
	OrderCeiling:  "Held at the ceiling: the room's order rate ({n} per second) is below maxRate and caps the controller; admitting faster would only have orders refused by the order limit.",
	UnknownReason: "Reason code {code}.",
}

var adaptKO = AdaptDashText{
	Heading:   "적응형 입장",
	RateNow:   "컨트롤러가 정한 입장 속도",
	PerSecond: "초당 {n}",
	Why:       "이유",
	BoundsH:   "범위",
	Bounds:    "초당 {min} ~ {max}",
	CappedBy:  "{n}(주문 속도)",
	TargetsH:  "목표",
	Targets:   "주문 p95 {p95} 이하, 실패한 주문 {budget} 이하",
	LastAt:    "마지막 결정 {when}",
	RateName:  "컨트롤러의 입장 속도",
	Changes:   "컨트롤러의 최근 변경",
	None:      "아직 변경이 없습니다. 컨트롤러는 1초마다 결정하며, 입장 속도나 이유가 바뀔 때마다 여기에 기록합니다.",
	ColTime:   "시각",
	ColRate:   "초당 입장 속도",
	ColWhy:    "이유",
	ColP95:    "주문 p95",
	ColErrors: "실패한 주문",
	Raised:    "올림",
	Cut:       "낮춤",
	Held:      "유지",
	OfTarget:  "{v} (목표 {target})",
	OfBudget:  "{v} (허용 {budget}) · 주문 {n}건 기준",
	Reasons: map[string]string{
		"":                 "아직 결정이 없습니다. 컨트롤러는 1초마다 결정합니다.",
		"increase":         "한 단계 올림: 주문이 빠르고(p95가 목표 이하) 실패가 허용 범위 안이며, 대기열이 더 받을 만큼 깁니다.",
		"cut_latency":      "낮춤: 주문 p95가 목표를 넘었습니다. 쇼핑몰이 느려지고 있습니다.",
		"cut_errors":       "낮춤: 실패한 주문이 허용 비율을 넘었습니다.",
		"cut_health":       "낮춤: 쇼핑몰의 상태 확인이 과부하라고 알렸습니다.",
		"hold_no_signal":   "유지: 최근 몇 초 동안 주문이 너무 적어 쇼핑몰 상태를 판단할 수 없거나, 신호를 읽지 못했습니다. 판단 근거 없이 속도를 올리지 않습니다.",
		"hold_short_line":  "유지: 쇼핑몰은 건강하지만 대기열이 짧습니다. 속도를 올려도 더 입장할 사람이 없습니다.",
		"hold_max":         "상한에서 유지: 입장 속도가 최대(maxRate)에 있습니다.",
		"hold_min":         "하한에서 유지: 쇼핑몰 상태가 좋지 않지만 입장 속도가 이미 최소(minRate)입니다.",
		"hold_pool":        "유지: 주문 데이터베이스 연결이 거의 모두 사용 중입니다. 곧 지연이 늘어납니다.",
		"hold_paused":      "유지: 대기실이 일시 중지되어 주문으로 속도를 판단할 수 없습니다.",
		"bounds":           "범위 안으로 이동: minRate, maxRate 또는 상한이 되는 주문 속도가 바뀌었습니다.",
		"cut_queue":        "목표 전에 낮춤: 가장 빠른 주문도 기다렸고, 쇼핑몰이 처리하는 것보다 많이 입장시켰습니다(처리 용량).",
		"probe":            "몇 명만 입장: 속도가 0이라 쇼핑몰이 회복되었는지 알려 줄 주문이 없었습니다.",
		"hold_settle":      "유지: 방금 낮췄고, 그 효과가 아직 주문에 나타나지 않았습니다.",
		"hold_drain":       "유지: 주문은 아직 느리지만 쇼핑몰이 처리하는 것보다 적게 입장시키고 있어 밀린 주문이 줄고 있습니다.",
		"hold_near_target": "유지: 쇼핑몰은 정상이지만 주문 p95가 목표에 가깝습니다.",
	},
	OrderCeiling:  "상한에서 유지: 대기실의 주문 속도(초당 {n})가 maxRate보다 낮아 컨트롤러의 상한이 됩니다. 더 빨리 입장시켜도 주문 제한에 걸려 거절될 뿐입니다.",
	UnknownReason: "이유 코드 {code}.",
}
