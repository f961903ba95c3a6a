package views

// DashText are the live dashboard's texts in one language. Strings with
// {name}, {now}, {max}, {room}, {n}, {of}, {set}, {when} are filled in by
// the views.
type DashText struct {
	Lang string
	// Title is the page's title: "{room} · live".
	Title string
	Live  string // the live badge, while the stream is connected
	// Reload is the link that shows the state again without JavaScript.
	Reload   string
	Settings string // the link to the room's settings and actions
	Updated  string // "Updated {when}"

	Waiting       string
	Prequeued     string
	Active        string
	AdmittedRate  string // admitted per second
	AdmitMeasured string // "{n} measured"
	AdmitSet      string // "{set} set"
	ETALast       string // ETA for the last in line
	ETAPaused     string // why there is no ETA: admissions paused
	OrdersRate    string // orders per second
	Placed        string // orders placed, in total
	P50           string
	P95           string
	SoldStock     string // "sold against stock"
	SoldOfStock   string // "{n} sold · {of} left"
	Failures      string // failures by reason, last 10 minutes
	Fail401       string
	Fail409       string
	Fail429       string
	FailSoldOut   string
	Fail503       string
	FailOther     string
	Instances     string // SSE connections per instance
	Instance      string
	Connections   string
	NoInstances   string
	// Phase heads the room's schedule phase, named by Phases (keys
	// "scheduled", "prequeue", "open", "closed").
	Phase     string
	Phases    map[string]string
	Paused    string // the room's state badges
	SoldOut   string
	Timeline  string
	NoEvents  string
	Last10Min string // a chart's x axis, left end
	Now       string // a chart's x axis, right end
	// ChartLabel describes a chart to a screen reader: {name}, {now}, {max}.
	ChartLabel string
	// ChartEmpty describes a chart with nothing recorded yet: {name}.
	ChartEmpty string
	NoData     string // a figure with no value ("—" is shown, this is read)
	// Events names the timeline's entries by audit action.
	Events map[string]string
	// IssuerFailed says the issuers' admission ticks or draws of the room
	// failed in the last 10 minutes: {n} times, the last at {when}.
	IssuerFailed string
	// Unavailable is said when the live figures cannot be read.
	Unavailable string
	// AsOf follows the "—" of a figure that cannot be read now: the time
	// of its last good reading ({when}); NeverRead when there was none.
	AsOf, NeverRead string
	// NoRoom is the error of a room that does not exist: {room}.
	NoRoom string
	// Busy refuses a stream when too many dashboards are open.
	Busy string

	// Networks heads the pre-queue joins by client network; FlagRule says
	// from how many joins ({n}) a network is flagged, and that many buyers
	// can share one; Network and NetworkJoins head its columns; Flagged
	// marks a flagged network in words; FlaggedCount ({n}) is the badge
	// at the top; NoneFlagged is said when no network is.
	Networks     string
	FlagRule     string
	Network      string
	NetworkJoins string
	Flagged      string
	FlaggedCount string
	NoneFlagged  string

	// GateSessions and GateSessionEvents ({opened}, {ended}, {idle}) are
	// the gate's sessions in an outside shop (gate mode).
	GateSessions      string
	GateSessionEvents string

	// Adapt are adaptive admission's words (console_dashboard_adapt_text.go).
	Adapt AdaptDashText
}

// DashTextFor returns the dashboard's texts in lang ("ko" or "en").
func DashTextFor(lang string) DashText {
	if lang == "ko" {
		return dashKO
	}
	return dashEN
}

var dashEN = DashText{
	Lang:          "en",
	Title:         "{room} · live",
	Live:          "Live",
	Reload:        "Reload",
	Settings:      "Settings and actions",
	Updated:       "Updated {when}",
	Waiting:       "Waiting",
	Prequeued:     "In the pre-queue",
	Active:        "Active passes",
	AdmittedRate:  "Admitted per second",
	AdmitMeasured: "{n} measured",
	AdmitSet:      "{set} set",
	ETALast:       "Wait for the last in line",
	ETAPaused:     "paused",
	OrdersRate:    "Orders per second",
	Placed:        "Orders placed",
	P50:           "Order p50",
	P95:           "Order p95",
	SoldStock:     "Sold against stock",
	SoldOfStock:   "{n} sold · {of} left",
	Failures:      "Failed orders, last 10 minutes",
	Fail401:       "401 no or bad pass",
	Fail409:       "409 pass in use or used",
	Fail429:       "429 too fast",
	FailSoldOut:   "Sold out",
	Fail503:       "503 unavailable",
	FailOther:     "Other",
	Instances:     "Live connections per instance",
	Instance:      "Instance",
	Connections:   "Connections",
	NoInstances:   "No instance has reported yet.",
	Phase:         "Phase",
	Phases:        map[string]string{"scheduled": "Scheduled", "prequeue": "Pre-queue open", "open": "Open", "closed": "Closed"},
	Paused:        "Paused",
	SoldOut:       "Sold out",
	Timeline:      "The sale's events",
	NoEvents:      "No events yet.",
	Last10Min:     "10 min ago",
	Now:           "now",
	ChartLabel:    "{name}: {now} now, at most {max} in the last 10 minutes",
	ChartEmpty:    "{name}: nothing recorded in the last 10 minutes",
	NoData:        "no value",
	IssuerFailed:  "Admission ticks or draws failed {n} times in the last 10 minutes, the last at {when}; the server's log says why.",
	Unavailable:   "The live figures cannot be read right now; they come back on their own.",
	AsOf:          "last read {when}",
	NeverRead:     "not read yet",
	NoRoom:        "There is no room named {room}.",
	Busy:          "Too many live dashboards are open on this server. Try again in a moment.",
	Events: map[string]string{
		"sale.created":         "Room created, not open yet",
		"sale.opened":          "Sale opened",
		"sale.closed":          "Sale closed",
		"sale.draining":        "New joins stopped, the line still served",
		"sale.prequeue_opened": "Pre-queue opened",
		"sale.paused":          "Admissions paused",
		"sale.resumed":         "Admissions resumed",
		"sale.sold_out":        "Sold out",
		"sale.reopened":        "Reopened",
		"sale.rate":            "Rate changed",
		"sale.adaptive_on":     "Adaptive admission on",
		"sale.adaptive_off":    "Adaptive admission off",
		"sale.deleted":         "Room deleted",
		"room.create":          "Room created",
		"room.update":          "Settings changed",
		"room.delete":          "Room deleted",
		"room.pause":           "Paused by an operator",
		"room.resume":          "Resumed by an operator",
		"room.drain":           "Draining",
		"room.close":           "Closed",
		"room.reopen":          "Reopened by an operator",
		"room.apikey":          "New gate API key",
	},

	Networks:     "Pre-queue networks",
	FlagRule:     "A network (/24 for IPv4, /64 for IPv6) is flagged from {n} pre-queue joins on. Many real buyers can share one network (mobile carriers, offices): a flag asks for a look, not a block.",
	Network:      "Network",
	NetworkJoins: "Pre-queue joins",
	Flagged:      "Flagged",
	FlaggedCount: "Networks flagged: {n}",
	NoneFlagged:  "No network is flagged.",

	GateSessions:      "Sessions in the shop",
	GateSessionEvents: "opened {opened} · ended {ended} · idle {idle}",

	Adapt: adaptEN,
}

var dashKO = DashText{
	Lang:          "ko",
	Title:         "{room} · 실시간",
	Live:          "실시간",
	Reload:        "새로 고침",
	Settings:      "설정 및 조작",
	Updated:       "{when} 기준",
	Waiting:       "대기 중",
	Prequeued:     "사전 대기열",
	Active:        "사용 중인 입장권",
	AdmittedRate:  "초당 입장",
	AdmitMeasured: "측정 {n}",
	AdmitSet:      "설정 {set}",
	ETALast:       "마지막 대기자 예상 대기 시간",
	ETAPaused:     "일시 중지됨",
	OrdersRate:    "초당 주문",
	Placed:        "완료된 주문",
	P50:           "주문 p50",
	P95:           "주문 p95",
	SoldStock:     "판매 대비 재고",
	SoldOfStock:   "{n}개 판매 · {of}개 남음",
	Failures:      "실패한 주문 (최근 10분)",
	Fail401:       "401 입장권 없음·잘못됨",
	Fail409:       "409 입장권 사용 중·사용됨",
	Fail429:       "429 너무 빠름",
	FailSoldOut:   "품절",
	Fail503:       "503 일시적 오류",
	FailOther:     "기타",
	Instances:     "인스턴스별 실시간 연결",
	Instance:      "인스턴스",
	Connections:   "연결",
	NoInstances:   "아직 보고한 인스턴스가 없습니다.",
	Phase:         "단계",
	Phases:        map[string]string{"scheduled": "예정", "prequeue": "사전 대기열 진행 중", "open": "판매 중", "closed": "종료"},
	Paused:        "일시 중지",
	SoldOut:       "품절",
	Timeline:      "판매 이벤트",
	NoEvents:      "아직 이벤트가 없습니다.",
	Last10Min:     "10분 전",
	Now:           "현재",
	ChartLabel:    "{name}: 현재 {now}, 최근 10분 최고 {max}",
	ChartEmpty:    "{name}: 최근 10분 동안 기록 없음",
	NoData:        "값 없음",
	IssuerFailed:  "최근 10분 동안 입장 처리 또는 추첨이 {n}번 실패했습니다. 마지막: {when}. 원인은 서버 로그에 있습니다.",
	Unavailable:   "지금은 실시간 수치를 읽을 수 없습니다. 곧 다시 표시됩니다.",
	AsOf:          "마지막으로 읽은 시각 {when}",
	NeverRead:     "아직 읽지 못함",
	NoRoom:        "{room} 대기실이 없습니다.",
	Busy:          "이 서버에 열린 실시간 대시보드가 너무 많습니다. 잠시 후 다시 시도해 주세요.",
	Events: map[string]string{
		"sale.created":         "대기실 생성 (아직 열리지 않음)",
		"sale.opened":          "판매 시작",
		"sale.closed":          "판매 종료",
		"sale.draining":        "신규 입장 중지, 대기열은 계속 진행",
		"sale.prequeue_opened": "사전 대기열 시작",
		"sale.paused":          "입장 일시 중지",
		"sale.resumed":         "입장 재개",
		"sale.sold_out":        "품절",
		"sale.reopened":        "판매 재개",
		"sale.rate":            "입장 속도 변경",
		"sale.adaptive_on":     "적응형 입장 켬",
		"sale.adaptive_off":    "적응형 입장 끔",
		"sale.deleted":         "대기실 삭제",
		"room.create":          "대기실 생성",
		"room.update":          "설정 변경",
		"room.delete":          "대기실 삭제",
		"room.pause":           "운영자가 일시 중지",
		"room.resume":          "운영자가 재개",
		"room.drain":           "마감 중",
		"room.close":           "닫힘",
		"room.reopen":          "운영자가 다시 열기",
		"room.apikey":          "새 게이트 API 키",
	},

	Networks:     "사전 대기열 네트워크",
	FlagRule:     "사전 대기열 참가가 {n}건 이상인 네트워크(IPv4 /24, IPv6 /64)를 표시합니다. 통신사나 회사처럼 실제 구매자 여럿이 한 네트워크를 함께 쓸 수 있으니, 표시는 차단이 아니라 확인해 보라는 뜻입니다.",
	Network:      "네트워크",
	NetworkJoins: "사전 대기열 참가",
	Flagged:      "주의",
	FlaggedCount: "주의 네트워크 {n}개",
	NoneFlagged:  "표시된 네트워크가 없습니다.",

	GateSessions:      "쇼핑몰 세션",
	GateSessionEvents: "시작 {opened} · 종료 {ended} · 만료 {idle}",

	Adapt: adaptKO,
}

// EventName returns the timeline's words for an audit action, or the
// action itself when it has none.
func (t DashText) EventName(action string) string {
	if s, ok := t.Events[action]; ok {
		return s
	}
	return action
}
