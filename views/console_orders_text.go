package views

import (
	"strings"
	"time"
)

// OrdersText is the texts of the console's orders, attribution and audit
// log pages in one language. Strings with {…} are filled in by the server.
type OrdersText struct {
	Lang string

	// Orders.
	OrdersTitle    string
	Filters        string
	Room           string
	AllRooms       string
	From           string
	To             string
	Status         string
	AnyStatus      string
	Placed         string
	Cancelled      string
	Source         string
	Medium         string
	Campaign       string
	Term           string
	Content        string
	Apply          string
	Clear          string
	ExportCSV      string
	TimesIn        string // {zone}
	NoOrders       string
	NextPage       string
	FirstPage      string
	When           string
	Order          string
	Product        string
	Quantity       string
	UnitPrice      string
	Amount         string
	Campaigns      string
	Actions        string
	CancelOrder    string
	CancelConfirm  string // {id}
	CancelHint     string
	OrderCancelled string // {id}
	UnknownPrice   string

	// Attribution.
	AttributionTitle string
	AttributionIntro string
	Show             string
	Direct           string
	Joined           string
	Admitted         string
	Orders           string
	Buyers           string
	Units            string
	Conversion       string
	AdmittedOrdered  string
	Revenue          string
	Total            string
	NoRooms          string
	NoCampaigns      string
	LiveUnavailable  string

	// Audit log.
	AuditTitle string
	AuditIntro string
	At         string
	Who        string
	Action     string
	Target     string
	Change     string
	NoEntries  string
	OlderPage  string
	NewestPage string
	FullValue  string
	NoRoom     string
	EmptyValue string

	// Refusals.
	ErrBadRoom          string
	ErrBadTime          string // {field}
	ErrToBeforeFrom     string
	ErrBadStatus        string
	ErrBadUTM           string // {field}
	ErrBadPage          string
	ErrBadZone          string
	ErrOrderNotFound    string
	ErrAlreadyCancelled string // {id}
	ErrNoOrders         string
	ErrNoAudit          string
}

var ordersKorean = OrdersText{
	Lang: "ko",

	OrdersTitle:    "주문",
	Filters:        "조건",
	Room:           "대기실",
	AllRooms:       "모든 대기실",
	From:           "시작 시각",
	To:             "종료 시각",
	Status:         "상태",
	AnyStatus:      "모든 상태",
	Placed:         "주문 완료",
	Cancelled:      "취소됨",
	Source:         "utm_source",
	Medium:         "utm_medium",
	Campaign:       "utm_campaign",
	Term:           "utm_term",
	Content:        "utm_content",
	Apply:          "적용",
	Clear:          "조건 지우기",
	ExportCSV:      "CSV 내보내기",
	TimesIn:        "시각은 {zone} 기준입니다.",
	NoOrders:       "조건에 맞는 주문이 없습니다.",
	NextPage:       "다음 페이지",
	FirstPage:      "처음으로",
	When:           "주문 시각",
	Order:          "주문 번호",
	Product:        "상품",
	Quantity:       "수량",
	UnitPrice:      "단가",
	Amount:         "금액",
	Campaigns:      "유입 경로",
	Actions:        "작업",
	CancelOrder:    "주문 취소",
	CancelConfirm:  "주문 {id}을(를) 취소하고 재고를 되돌립니다",
	CancelHint:     "취소하면 수량만큼 재고가 돌아오고, 품절된 대기실은 다시 열립니다.",
	OrderCancelled: "주문 {id}을(를) 취소했습니다. 재고가 돌아왔습니다.",
	UnknownPrice:   "기록 없음",

	AttributionTitle: "유입 경로",
	AttributionIntro: "캠페인(utm_source / utm_medium / utm_campaign)별로 줄을 선 방문자, 입장한 방문자, 주문과 매출입니다. 주문하지 않고 떠난 방문자도 셉니다.",
	Show:             "보기",
	Direct:           "직접 유입",
	Joined:           "줄 선 방문자",
	Admitted:         "입장",
	Orders:           "주문",
	Buyers:           "구매자",
	Units:            "수량",
	Conversion:       "전환율(구매자/줄 선 방문자)",
	AdmittedOrdered:  "입장 후 구매율",
	Revenue:          "매출",
	Total:            "합계",
	NoRooms:          "아직 대기실이 없습니다.",
	NoCampaigns:      "이 대기실에는 아직 방문자도 주문도 없습니다.",
	LiveUnavailable:  "줄 선 방문자와 입장 수를 지금 읽을 수 없어, 주문만 보여 줍니다.",

	AuditTitle: "변경 기록",
	AuditIntro: "누가 언제 무엇을 바꿨는지, 새 기록부터 보여 줍니다.",
	At:         "시각",
	Who:        "누가",
	Action:     "작업",
	Target:     "대상",
	Change:     "이전 값 → 새 값",
	NoEntries:  "기록이 없습니다.",
	OlderPage:  "이전 기록",
	NewestPage: "최신 기록으로",
	FullValue:  "전체 값",
	NoRoom:     "대기실 없음",
	EmptyValue: "(없음)",

	ErrBadRoom:          "대기실 이름은 영문 소문자, 숫자, 하이픈으로 된 64자 이하여야 합니다.",
	ErrBadTime:          "{field} 값을 이해하지 못했습니다. 날짜와 시각을 고르세요.",
	ErrToBeforeFrom:     "종료 시각은 시작 시각보다 뒤여야 합니다.",
	ErrBadStatus:        "상태는 주문 완료 또는 취소됨 중에서 고르세요.",
	ErrBadUTM:           "{field} 값은 200바이트 이하의 일반 텍스트여야 합니다.",
	ErrBadPage:          "페이지 위치가 올바르지 않습니다. 처음부터 다시 보세요.",
	ErrBadZone:          "알 수 없는 시간대입니다.",
	ErrOrderNotFound:    "이 대기실에 그런 주문이 없습니다.",
	ErrAlreadyCancelled: "주문 {id}은(는) 이미 취소되었습니다. 아무것도 바뀌지 않았습니다.",
	ErrNoOrders:         "이 서버에는 주문 데이터베이스가 연결되어 있지 않습니다.",
	ErrNoAudit:          "이 서버에는 변경 기록이 연결되어 있지 않습니다(데이터베이스 필요).",
}

var ordersEnglish = OrdersText{
	Lang: "en",

	OrdersTitle:    "Orders",
	Filters:        "Filters",
	Room:           "Room",
	AllRooms:       "All rooms",
	From:           "From",
	To:             "To",
	Status:         "Status",
	AnyStatus:      "Any status",
	Placed:         "Placed",
	Cancelled:      "Cancelled",
	Source:         "utm_source",
	Medium:         "utm_medium",
	Campaign:       "utm_campaign",
	Term:           "utm_term",
	Content:        "utm_content",
	Apply:          "Apply",
	Clear:          "Clear filters",
	ExportCSV:      "Export CSV",
	TimesIn:        "Times are in {zone}.",
	NoOrders:       "No orders match.",
	NextPage:       "Next page",
	FirstPage:      "First page",
	When:           "Placed at",
	Order:          "Order",
	Product:        "Product",
	Quantity:       "Qty",
	UnitPrice:      "Unit price",
	Amount:         "Amount",
	Campaigns:      "Campaign",
	Actions:        "Actions",
	CancelOrder:    "Cancel order",
	CancelConfirm:  "Cancel order {id} and give its stock back",
	CancelHint:     "Cancelling puts the quantity back in stock, and reopens a sold-out room.",
	OrderCancelled: "Order {id} is cancelled; its stock is back.",
	UnknownPrice:   "not recorded",

	AttributionTitle: "Attribution",
	AttributionIntro: "Per campaign (utm_source / utm_medium / utm_campaign): the visitors who joined the line, were admitted, ordered, and the revenue. Visitors who left without ordering count too.",
	Show:             "Show",
	Direct:           "Direct",
	Joined:           "Joined",
	Admitted:         "Admitted",
	Orders:           "Orders",
	Buyers:           "Buyers",
	Units:            "Units",
	Conversion:       "Conversion (buyers / joined)",
	AdmittedOrdered:  "Admitted → ordered",
	Revenue:          "Revenue",
	Total:            "Total",
	NoRooms:          "There are no rooms yet.",
	NoCampaigns:      "Nobody has joined or ordered in this room yet.",
	LiveUnavailable:  "The joins and admissions cannot be read right now; only the orders are shown.",

	AuditTitle: "Audit log",
	AuditIntro: "Who changed what, and when; newest first.",
	At:         "When",
	Who:        "Who",
	Action:     "Action",
	Target:     "Target",
	Change:     "Old value → new value",
	NoEntries:  "Nothing has been recorded.",
	OlderPage:  "Older entries",
	NewestPage: "Newest entries",
	FullValue:  "Full value",
	NoRoom:     "no room",
	EmptyValue: "(none)",

	ErrBadRoom:          "A room name is 1 to 64 lower-case letters, digits and hyphens.",
	ErrBadTime:          "The {field} time could not be read. Pick a date and a time.",
	ErrToBeforeFrom:     "The end time must come after the start time.",
	ErrBadStatus:        "Pick placed or cancelled as the status.",
	ErrBadUTM:           "{field} is at most 200 bytes of plain text.",
	ErrBadPage:          "That page position is not valid. Start again from the first page.",
	ErrBadZone:          "That time zone is unknown.",
	ErrOrderNotFound:    "There is no such order in this room.",
	ErrAlreadyCancelled: "Order {id} was already cancelled. Nothing was changed.",
	ErrNoOrders:         "This server has no order database attached.",
	ErrNoAudit:          "This server keeps no audit log (it needs the database).",
}

// OrdersTextFor returns the orders, attribution and audit texts of lang
// ("ko" or "en").
func OrdersTextFor(lang string) OrdersText {
	if lang == "ko" {
		return ordersKorean
	}
	return ordersEnglish
}

// ConsoleTime writes t in loc as an operator of lang reads it, with the
// zone's offset: "2026. 11. 30. 18:05:09 (UTC+09:00)" in Korean,
// "30 Nov 2026, 18:05:09 (UTC+09:00)" in English.
func ConsoleTime(t time.Time, loc *time.Location, lang string) string {
	t = t.In(loc)
	layout := "2 Jan 2006, 15:04:05"
	if lang == "ko" {
		layout = "2006. 1. 2. 15:04:05"
	}
	return t.Format(layout) + " (" + UTCOffset(t) + ")"
}

// UTCOffset names the offset of t's zone: "UTC+09:00", "UTC-03:30", "UTC".
func UTCOffset(t time.Time) string {
	_, off := t.Zone()
	if off == 0 {
		return "UTC"
	}
	return "UTC" + strings.Replace(t.Format("-07:00"), "Z", "+00:00", 1)
}
