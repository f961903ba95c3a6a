package views

// RoomsText is the texts of the console's rooms and products pages in one
// language. Strings with {name}, {n}, {min}, {max} or {room} are filled in
// by the server.
type RoomsText struct {
	Lang string

	RoomsTitle    string
	RoomsCaption  string // the table's caption, which says it scrolls
	NoRooms       string
	NewRoom       string
	Room          string
	Phase         string
	Waiting       string
	Prequeued     string
	AdmitRate     string // admitted per second, measured
	Active        string
	State         string
	Links         string
	Dashboard     string
	Settings      string
	Products      string
	NotLive       string // a room the database records but Redis has not (yet)
	LiveUnread    string // a room whose live figures cannot be read now
	RoomsUnlisted string // Redis did not answer the list

	PhaseScheduled string
	PhasePrequeue  string
	PhaseOpen      string
	PhaseClosed    string
	PausedBadge    string
	SoldOutBadge   string
	ModeNames      map[string]string
	// Challenge labels the proof-of-work setting; ChallengeNames name its
	// values (off, auto, always).
	Challenge      string
	ChallengeHint  string
	ChallengeNames map[string]string

	NewRoomTitle  string
	SettingsTitle string // {room}
	Saved         string
	Created       string
	// LeftoverProducts warns, on a new room's settings, that products of a
	// deleted room of the same name came back with the name; {n}.
	LeftoverProducts     string
	LeftoverProductsLink string
	LeftoverStock        string // {name}, {stock}
	FixErrors            string
	SaveButton           string
	CreateButton         string
	General              string
	Name                 string
	NameHint             string
	Title                string
	Schedule             string
	ScheduleHint         string
	PrequeueAt           string
	OpensAt              string
	ClosesAt             string
	TimeZone             string
	ServeLine            string
	Admission            string
	Mode                 string
	Rate                 string
	MaxActive            string
	MaxActiveHint        string
	TokenTTL             string
	ReadySpread          string // readySpreadMs's label
	ReadySpreadHint      string // what it is for; {ms}: the server's default, {max}: one tick
	ReadySpreadEmpty     string // the empty field's placeholder; {ms}
	OrderBucket          string
	OrderRate            string
	OrderBurst           string
	MaxPerBuyer          string
	MaxPerBuyerHnt       string
	ShopURL              string
	ShopURLHint          string
	Absence              string
	AbandonAfter         string
	AbandonHint          string
	ReturnWithin         string
	Seconds              string
	PerSecond            string
	// ADAPT: adaptive admission.
	Adaptive       string
	AdaptiveHint   string
	AdaptiveOn     string
	MinRate        string
	MinRateHint    string
	MaxRate        string
	TargetP95      string
	Millis         string
	MaxErrRate     string
	MaxErrRateHint string
	HealthURL      string
	HealthURLHint  string

	Actions     string
	ActionsHint string
	Pause       string
	Resume      string
	Drain       string
	DrainHint   string
	// ConfirmStop is the checkbox that Drain and Close ask for;
	// ErrConfirmStop says it was left unticked.
	ConfirmStop    string
	ErrConfirmStop string
	Close          string
	CloseHint      string
	Reopen         string
	ReopenHint     string
	ActionDone     map[string]string
	DeleteTitle    string
	DeleteHint     string
	DeleteLabel    string // {room}
	DeleteButton   string
	Deleted        string // {room}

	ErrNotNumber     string
	ErrNotWhole      string
	ErrNotTime       string
	ErrBadZone       string
	ErrBadName       string
	ErrRoomExists    string
	ErrReservedName  string
	ErrNoRoom        string
	ErrConfirm       string
	ErrBadAction     string
	ErrDrainBefore   string
	ErrUnavailable   string
	ErrSettings      map[string]string // by field: what it must be
	ErrScheduleOrder map[string]string // by field: the order of the times
	ErrHealthHost    string            // {host}: a healthURL host the server never fetches from

	ProductsTitle   string // {room}
	ProductsCaption string
	NoProducts      string
	AddProduct      string
	EditProduct     string // {name}
	ProductName     string
	Price           string
	PriceHint       string // {currency}, {example}
	// PriceHintAdd is the add form's hint, before a currency is chosen.
	PriceHintAdd     string
	ErrCurrencyX     string
	Currency         string
	Stock            string
	StockHint        string
	ImageURL         string
	ImageHint        string
	Image            string
	ImageFile        string // the upload's label
	ImageFileHint    string // {kb}: its types and limit
	ImageBroken      string // where a product's image did not load
	ErrImageType     string // an upload of a type not accepted; the other refusals are the branding's ErrImage
	ErrImageMissing  string // a path on this site that names no image here
	ErrImageTooLarge string // {kb}: the form was over its limit, nothing was read
	AddButton        string
	ProductSaved     string
	ProductAdded     string
	ProductDeleted   string
	Restocked        string
	SoldOutNow       string
	DeleteProduct    string
	DeleteProductHnt string
	BackToProducts   string
	BackToRooms      string
	ErrPrice         string // {n}: the currency's decimals
	ErrProduct       map[string]string
	ErrHasOrders     string
	ErrNoProduct     string
}

var roomsKorean = RoomsText{
	Lang: "ko",

	RoomsTitle:    "대기실",
	RoomsCaption:  "대기실과 실시간 수치 (좁은 화면에서는 옆으로 밀어 보세요)",
	NoRooms:       "아직 대기실이 없습니다.",
	NewRoom:       "새 대기실",
	Room:          "대기실",
	Phase:         "단계",
	Waiting:       "대기 중",
	Prequeued:     "사전 대기",
	AdmitRate:     "입장/초",
	Active:        "활성 입장권",
	State:         "상태",
	Links:         "관리",
	Dashboard:     "대시보드",
	Settings:      "설정",
	Products:      "상품",
	NotLive:       "Redis에 없음 (복원 대기)",
	LiveUnread:    "지금은 실시간 수치를 읽을 수 없습니다",
	RoomsUnlisted: "일부 대기실 목록을 읽지 못했습니다. 잠시 후 새로고침하세요.",

	PhaseScheduled: "예정",
	PhasePrequeue:  "사전 대기",
	PhaseOpen:      "진행 중",
	PhaseClosed:    "종료",
	PausedBadge:    "일시 중지",
	SoldOutBadge:   "품절",
	ModeNames:      map[string]string{"fifo": "선착순 (FIFO)", "random": "무작위", "passthrough": "바로 통과 (대기 없음)", "closed": "닫힘"},
	Challenge:      "봇 방지 (작업 증명)",
	ChallengeHint:  "브라우저가 참여 전에 보이지 않게 작은 계산을 합니다. 자동: 같은 네트워크에서 참여가 많을수록 어려워집니다.",
	ChallengeNames: map[string]string{"off": "끔", "auto": "자동", "always": "항상 (더 어렵게)"},

	NewRoomTitle:         "새 대기실",
	SettingsTitle:        "{room} 설정",
	Saved:                "저장했습니다.",
	Created:              "대기실을 만들었습니다.",
	LeftoverProducts:     "주의: 같은 이름으로 지웠던 대기실의 상품 {n}개가 이 대기실에 그대로 남아 있어, 판매가 열리면 다시 팔립니다. 팔지 않을 상품은 재고를 0으로 하거나 지우세요.",
	LeftoverProductsLink: "상품 관리로 가기",
	LeftoverStock:        "{name} (재고 {stock})",
	FixErrors:            "표시된 항목을 고쳐 주세요. 아무것도 저장하지 않았습니다.",
	SaveButton:           "저장",
	CreateButton:         "만들기",
	General:              "기본",
	Name:                 "이름 (주소)",
	NameHint:             "영문 소문자, 숫자, '-' 1~64자. /r/이름 주소가 됩니다. 나중에 바꿀 수 없습니다.",
	Title:                "제목",
	Schedule:             "일정",
	ScheduleHint:         "비워 두면 일정 없이 바로 열립니다. 사전 대기는 오픈 시각이 있어야 합니다.",
	PrequeueAt:           "사전 대기 시작",
	OpensAt:              "오픈",
	ClosesAt:             "마감",
	TimeZone:             "시간대",
	ServeLine:            "마감 후에도 이미 줄 선 사람은 계속 입장",
	Admission:            "입장",
	Mode:                 "방식",
	Rate:                 "초당 입장 수",
	MaxActive:            "동시 활성 입장권 상한",
	MaxActiveHint:        "0이면 상한 없음",
	TokenTTL:             "입장권 유효 시간",
	ReadySpread:          "입장 알림 분산 시간",
	ReadySpreadHint:      "한 틱에 입장하는 구매자들에게 이 시간에 걸쳐 차례를 나눠 알려, 같은 순간(같은 밀리초)에 주문 페이지에 몰리지 않게 합니다. 0이면 한꺼번에 보냅니다. 비워 두면 서버 기본값({ms}ms)을 따릅니다. 최대 한 틱({max}ms).",
	ReadySpreadEmpty:     "서버 기본값 {ms}",
	OrderBucket:          "주문 제한",
	OrderRate:            "초당 주문 수",
	OrderBurst:           "순간 최대 주문 수",
	MaxPerBuyer:          "1인당 최대 수량",
	MaxPerBuyerHnt:       "0이면 주문당 기본 한도만 적용",
	ShopURL:              "쇼핑몰 주소",
	ShopURLHint:          "비워 두거나 http(s)://로 시작하는 주소",
	Absence:              "자리 비움",
	AbandonAfter:         "자리 비움 판단까지",
	AbandonHint:          "0이면 자리 비움을 판단하지 않음",
	ReturnWithin:         "돌아오면 자리 유지",
	Seconds:              "초",
	PerSecond:            "/초",
	Adaptive:             "적응형 입장",
	AdaptiveHint:         "켜면 주문 응답 시간(p95)과 오류율에 따라 초당 입장 수를 1초마다 최소와 최대 사이에서 자동으로 조절합니다. 초당 입장 수를 직접 바꾸면 꺼지고, 다시 켤 때까지 직접 정한 값이 유지됩니다. 주문 제한(초당 주문 수)이 최대보다 낮으면 그 값이 상한이 됩니다. 더 빨리 입장시켜도 주문이 제한에 걸려 거절되기 때문입니다.",
	AdaptiveOn:           "초당 입장 수 자동 조절",
	MinRate:              "최소 초당 입장 수",
	MinRateHint:          "0이면 주문이 나빠질 때 입장을 멈춤",
	MaxRate:              "최대 초당 입장 수",
	TargetP95:            "목표 주문 응답 시간 (p95)",
	Millis:               "ms",
	MaxErrRate:           "허용 주문 오류율",
	MaxErrRateHint:       "0에서 1 사이 (0.02 = 2%)",
	HealthURL:            "상태 확인 주소 (선택)",
	HealthURLHint:        "약 1초마다 조회합니다. JSON의 \"load\" 값이나 Prometheus 게이지 load가 1 이상이면 입장 속도를 줄이고, 응답이 없으면 속도를 유지합니다.",

	Actions:        "운영",
	ActionsHint:    "각 동작은 즉시 모든 서버에 적용되고 변경 기록에 남습니다.",
	Pause:          "일시 중지",
	Resume:         "재개",
	Drain:          "신규 입장 마감 (줄은 계속)",
	DrainHint:      "지금부터 새로 줄을 설 수 없고, 이미 줄 선 사람은 계속 입장합니다.",
	ConfirmStop:    "이제 구매자가 새로 줄을 설 수 없다는 것을 이해했습니다",
	ErrConfirmStop: "'새 입장 막기'와 '닫기'는 구매자가 더 이상 줄을 설 수 없게 합니다. 확인란에 체크한 뒤 다시 누르세요. 아무것도 바꾸지 않았습니다.",
	Close:          "닫기",
	CloseHint:      "아무도 줄을 서거나 입장할 수 없습니다.",
	Reopen:         "다시 열기",
	ReopenHint:     "품절 표시를 지우고, 닫혔거나 마감된 대기실을 다시 엽니다.",
	ActionDone: map[string]string{
		"pause": "일시 중지했습니다.", "resume": "재개했습니다.", "drain": "신규 입장을 마감했습니다. 줄은 계속 입장합니다.",
		"close": "대기실을 닫았습니다.", "reopen": "대기실을 다시 열었습니다.",
	},
	DeleteTitle:  "대기실 삭제",
	DeleteHint:   "줄, 입장권, 실시간 수치가 모두 지워집니다. 상품과 주문 기록은 남습니다.",
	DeleteLabel:  "확인을 위해 대기실 이름 {room}을(를) 입력하세요",
	DeleteButton: "삭제",
	Deleted:      "{room} 대기실을 삭제했습니다.",

	ErrNotNumber:    "숫자를 입력하세요.",
	ErrNotWhole:     "정수를 입력하세요.",
	ErrNotTime:      "날짜와 시각을 입력하세요 (예: 2026-12-01 10:00).",
	ErrBadZone:      "목록에서 시간대를 고르세요.",
	ErrBadName:      "이름은 영문 소문자, 숫자, '-' 1~64자여야 합니다.",
	ErrRoomExists:   "같은 이름의 대기실이 이미 있습니다.",
	ErrReservedName: "이 이름은 콘솔 주소에 쓰여 고를 수 없습니다. 다른 이름을 고르세요.",
	ErrNoRoom:       "그런 대기실이 없습니다.",
	ErrConfirm:      "삭제하려면 대기실 이름을 정확히 입력하세요. 아무것도 삭제하지 않았습니다.",
	ErrBadAction:    "알 수 없는 동작입니다.",
	ErrDrainBefore:  "아직 오픈 전이라 줄이 없습니다. 대신 '닫기'를 쓰거나 일정을 고치세요.",
	ErrUnavailable:  "저장소가 잠시 응답하지 않습니다. 아무것도 바뀌지 않았을 수 있으니 잠시 후 다시 확인하세요.",
	ErrSettings: map[string]string{
		"title":               "제목은 200자 이하의 일반 문자여야 합니다.",
		"rate":                "0.01에서 10000 사이여야 합니다.",
		"maxActive":           "0(상한 없음)에서 10000000 사이여야 합니다.",
		"tokenTTLSeconds":     "10초에서 86400초 사이여야 합니다.",
		"orderRate":           "0.01에서 10000 사이여야 합니다.",
		"orderBurst":          "1에서 1000000 사이여야 합니다.",
		"abandonAfterSeconds": "0(판단 안 함) 또는 60초에서 3600초 사이여야 합니다.",
		"returnWithinSeconds": "자리 비움 판단 시간(최소 60초) 이상, 86400초 이하여야 합니다.",
		"shopURL":             "비워 두거나 2048바이트 이하의 http(s) 주소여야 합니다.",
		"maxPerBuyer":         "0(별도 한도 없음)에서 1000000 사이여야 합니다.",
		"mode":                "목록에서 방식을 고르세요.",
		"challenge":           "목록에서 봇 방지 설정을 고르세요.",
		"schedule":            "2000년에서 9999년 사이의 시각이어야 합니다.",
		"minRate":             "0에서 10000 사이이고, 최대 초당 입장 수 이하여야 합니다.",
		"maxRate":             "0.01에서 10000 사이여야 합니다.",
		"targetP95Ms":         "1ms에서 60000ms 사이여야 합니다.",
		"maxErrorRate":        "0에서 1 사이여야 합니다.",
		"healthURL":           "비워 두거나 2048바이트 이하의 http(s) 주소여야 하며, 사용자 이름과 비밀번호를 넣을 수 없습니다.",
		"readySpreadMs":       "비워 두거나(서버 기본값), 0(분산 없음) 또는 1ms에서 {max}ms(한 틱) 사이여야 합니다.",
	},
	ErrHealthHost: "{host}은(는) 링크 로컬·클라우드 메타데이터·미지정·멀티캐스트 주소라 서버가 조회하지 않습니다. 루프백과 사설 네트워크 주소는 쓸 수 있습니다.",
	ErrScheduleOrder: map[string]string{
		"prequeueAt": "사전 대기는 오픈보다 먼저 시작해야 하고, 오픈 시각이 있어야 합니다.",
		"closesAt":   "마감은 오픈(과 사전 대기 시작)보다 뒤여야 합니다.",
	},

	ProductsTitle:    "{room} 상품",
	ProductsCaption:  "상품 (좁은 화면에서는 옆으로 밀어 보세요)",
	NoProducts:       "아직 상품이 없습니다.",
	AddProduct:       "상품 추가",
	EditProduct:      "{name} 수정",
	ProductName:      "상품명",
	Price:            "가격",
	PriceHint:        "{currency} 단위로 입력 (예: {example})",
	PriceHintAdd:     "통화 단위로 입력 (예: KRW는 12950, USD는 129.50)",
	ErrCurrencyX:     "X로 시작하는 코드(XXX, XTS, XAU, XDR 등)는 판매에 쓸 수 없습니다. KRW, USD 같은 통화 코드를 입력하세요.",
	Currency:         "통화",
	Stock:            "재고",
	StockHint:        "재고를 늘리면 품절된 대기실이 다시 열립니다.",
	ImageURL:         "이미지 주소",
	ImageHint:        "https:// 주소, 또는 이 사이트에 있는 이미지의 경로(올린 이미지는 /media/…)",
	Image:            "이미지",
	ImageFile:        "또는 이미지 파일 올리기",
	ImageFileHint:    "PNG, JPEG, GIF, WebP, 최대 {kb}KB. 올리면 위의 주소 대신 쓰입니다.",
	ImageBroken:      "이미지를 불러오지 못했습니다. 주소를 확인하거나 파일을 다시 올려 주세요.",
	ErrImageType:     "허용된 이미지 형식이 아닙니다(PNG, JPEG, GIF, WebP).",
	ErrImageMissing:  "이 사이트에 없는 이미지입니다. 파일을 올리거나, 올린 이미지(/media/…)나 https:// 주소를 입력해 주세요.",
	ErrImageTooLarge: "올린 파일이 너무 커서 아무것도 저장하지 않았습니다. 상품 이미지는 최대 {kb}KB까지입니다.",
	AddButton:        "추가",
	ProductSaved:     "상품을 저장했습니다.",
	ProductAdded:     "상품을 추가했습니다.",
	ProductDeleted:   "상품을 삭제했습니다.",
	Restocked:        "재고가 늘어 대기실을 다시 열었습니다 (품절 해제).",
	SoldOutNow:       "이 대기실은 지금 품절 상태입니다. 재고를 늘리면 다시 열립니다.",
	DeleteProduct:    "상품 삭제",
	DeleteProductHnt: "주문이 있는 상품은 지울 수 없습니다. 대신 재고를 0으로 하세요.",
	BackToProducts:   "상품 목록으로",
	BackToRooms:      "대기실 목록으로",
	ErrPrice:         "0 이상의 금액을 소수점 {n}자리까지 입력하세요.",
	ErrProduct: map[string]string{
		"name":     "상품명은 1~200자의 일반 문자여야 합니다.",
		"price":    "가격이 너무 큽니다.",
		"currency": "KRW, USD 같은 ISO 4217 통화 코드(대문자 3자)여야 합니다.",
		"stock":    "0에서 1000000000 사이여야 합니다.",
		"imageURL": "비워 두거나, https:// 주소 또는 /로 시작하는 경로(2048바이트 이하)여야 합니다.",
	},
	ErrHasOrders: "주문이 있는 상품이라 지울 수 없습니다. 재고를 0으로 하세요.",
	ErrNoProduct: "그런 상품이 없습니다.",
}

var roomsEnglish = RoomsText{
	Lang: "en",

	RoomsTitle:    "Rooms",
	RoomsCaption:  "Rooms and their live figures (scroll sideways on a narrow screen)",
	NoRooms:       "There are no rooms yet.",
	NewRoom:       "New room",
	Room:          "Room",
	Phase:         "Phase",
	Waiting:       "Waiting",
	Prequeued:     "Pre-queue",
	AdmitRate:     "Admitted/s",
	Active:        "Active passes",
	State:         "State",
	Links:         "Manage",
	Dashboard:     "Dashboard",
	Settings:      "Settings",
	Products:      "Products",
	NotLive:       "not in Redis (awaiting restore)",
	LiveUnread:    "the live figures cannot be read right now",
	RoomsUnlisted: "Part of the room list could not be read. Reload in a moment.",

	PhaseScheduled: "Scheduled",
	PhasePrequeue:  "Pre-queue",
	PhaseOpen:      "Open",
	PhaseClosed:    "Closed",
	PausedBadge:    "Paused",
	SoldOutBadge:   "Sold out",
	ModeNames:      map[string]string{"fifo": "First come, first served (FIFO)", "random": "Random", "passthrough": "Pass-through (no waiting)", "closed": "Closed"},
	Challenge:      "Bot defence (proof of work)",
	ChallengeHint:  "The browser does a small, invisible computation before joining. Automatic: harder the more one network joins.",
	ChallengeNames: map[string]string{"off": "Off", "auto": "Automatic", "always": "Always (harder)"},

	NewRoomTitle:         "New room",
	SettingsTitle:        "Settings of {room}",
	Saved:                "Saved.",
	Created:              "Room created.",
	LeftoverProducts:     "Warning: {n} product(s) of a deleted room of the same name are still attached to this room and go back on sale when it opens. Set the stock to 0 or delete those you do not sell.",
	LeftoverProductsLink: "Go to the products",
	LeftoverStock:        "{name} (stock {stock})",
	FixErrors:            "Please fix the marked fields. Nothing was saved.",
	SaveButton:           "Save",
	CreateButton:         "Create",
	General:              "General",
	Name:                 "Name (address)",
	NameHint:             "1 to 64 of a-z, 0-9 and '-'. It becomes the address /r/name and cannot change later.",
	Title:                "Title",
	Schedule:             "Schedule",
	ScheduleHint:         "Leave empty to open at once without a schedule. A pre-queue needs an opening time.",
	PrequeueAt:           "Pre-queue opens",
	OpensAt:              "Sale opens",
	ClosesAt:             "Sale closes",
	TimeZone:             "Time zone",
	ServeLine:            "After closing, keep admitting those already in line",
	Admission:            "Admission",
	Mode:                 "Mode",
	Rate:                 "Admissions per second",
	MaxActive:            "Most active passes at once",
	MaxActiveHint:        "0 means no cap",
	TokenTTL:             "Pass lifetime",
	ReadySpread:          "Spread of each tick's turns",
	ReadySpreadHint:      "Spreads the buyers let in by one tick over this long, so they do not reach the order page in the same millisecond; 0 sends them at once. Empty follows the server's default ({ms} ms). At most one tick ({max} ms).",
	ReadySpreadEmpty:     "server default {ms}",
	OrderBucket:          "Order limit",
	OrderRate:            "Orders per second",
	OrderBurst:           "Order burst",
	MaxPerBuyer:          "Most items per buyer",
	MaxPerBuyerHnt:       "0 means only the per-order limit",
	ShopURL:              "Shop address",
	ShopURLHint:          "Empty, or an address starting with http(s)://",
	Absence:              "Away buyers",
	AbandonAfter:         "Away after",
	AbandonHint:          "0 means never away",
	ReturnWithin:         "Keep their place if back within",
	Seconds:              "seconds",
	PerSecond:            "/s",
	Adaptive:             "Adaptive admission",
	AdaptiveHint:         "When on, admissions per second follow the orders' response time (p95) and error rate, adjusted every second between the minimum and the maximum. Changing admissions per second by hand turns it off, and your rate stays until you turn it on again. When orders per second (the order limit) is below the maximum, it is the ceiling: admitting faster would only have orders refused by the limit.",
	AdaptiveOn:           "Adjust admissions per second automatically",
	MinRate:              "Minimum admissions per second",
	MinRateHint:          "0 pauses admission when orders suffer",
	MaxRate:              "Maximum admissions per second",
	TargetP95:            "Target order response time (p95)",
	Millis:               "ms",
	MaxErrRate:           "Tolerated order error rate",
	MaxErrRateHint:       "Between 0 and 1 (0.02 = 2%)",
	HealthURL:            "Health URL (optional)",
	HealthURLHint:        "Polled about once a second: a JSON \"load\" or a Prometheus gauge load of 1 or more cuts the rate; no answer holds it.",

	Actions:        "Run the sale",
	ActionsHint:    "Each action applies to every server at once and goes in the audit log.",
	Pause:          "Pause",
	Resume:         "Resume",
	Drain:          "Stop new joins (serve the line)",
	DrainHint:      "From now on nobody new can join; those already in line keep being admitted.",
	ConfirmStop:    "I understand buyers can no longer join",
	ErrConfirmStop: "Stop new joins and Close keep buyers from joining: tick the confirmation box, then press the button again. Nothing was changed.",
	Close:          "Close",
	CloseHint:      "Nobody joins and nobody is admitted.",
	Reopen:         "Reopen",
	ReopenHint:     "Clears the sold-out flag, and opens a closed or drained room again.",
	ActionDone: map[string]string{
		"pause": "Paused.", "resume": "Resumed.", "drain": "New joins stopped; the line is still served.",
		"close": "The room is closed.", "reopen": "The room is open again.",
	},
	DeleteTitle:  "Delete the room",
	DeleteHint:   "Its line, passes and live figures are wiped. Its products and orders stay on record.",
	DeleteLabel:  "To confirm, type the room's name, {room}",
	DeleteButton: "Delete",
	Deleted:      "Room {room} deleted.",

	ErrNotNumber:    "Enter a number.",
	ErrNotWhole:     "Enter a whole number.",
	ErrNotTime:      "Enter a date and time (such as 2026-12-01 10:00).",
	ErrBadZone:      "Pick a time zone from the list.",
	ErrBadName:      "Names are 1 to 64 of a-z, 0-9 and '-'.",
	ErrRoomExists:   "A room of that name already exists.",
	ErrReservedName: "The console's own pages use that name: pick another.",
	ErrNoRoom:       "There is no such room.",
	ErrConfirm:      "Type the room's name exactly to delete it. Nothing was deleted.",
	ErrBadAction:    "Unknown action.",
	ErrDrainBefore:  "The sale has not opened yet, so there is no line to serve. Use Close, or change the schedule.",
	ErrUnavailable:  "The store is briefly not answering. The change may not have been made: check again in a moment.",
	ErrSettings: map[string]string{
		"title":               "The title must be at most 200 characters of plain text.",
		"rate":                "Must be between 0.01 and 10000.",
		"maxActive":           "Must be between 0 (no cap) and 10000000.",
		"tokenTTLSeconds":     "Must be between 10 and 86400 seconds.",
		"orderRate":           "Must be between 0.01 and 10000.",
		"orderBurst":          "Must be between 1 and 1000000.",
		"abandonAfterSeconds": "Must be 0 (never) or between 60 and 3600 seconds.",
		"returnWithinSeconds": "Must be at least the away time (and at least 60), at most 86400 seconds.",
		"shopURL":             "Must be empty or an http(s) address of at most 2048 bytes.",
		"maxPerBuyer":         "Must be between 0 (no limit of its own) and 1000000.",
		"mode":                "Pick a mode from the list.",
		"challenge":           "Pick a bot defence setting from the list.",
		"schedule":            "Times must be between the years 2000 and 9999.",
		"minRate":             "Must be between 0 and 10000, and not above the maximum.",
		"maxRate":             "Must be between 0.01 and 10000.",
		"targetP95Ms":         "Must be between 1 and 60000 ms.",
		"maxErrorRate":        "Must be between 0 and 1.",
		"healthURL":           "Leave empty, or an http(s) address of at most 2048 bytes, without user:password.",
		"readySpreadMs":       "Must be empty (the server's default), 0 (no spread) or between 1 and {max} ms (one tick).",
	},
	ErrHealthHost: "{host} is a link-local, cloud metadata, unspecified or multicast address, which the server never fetches. Loopback and private addresses are allowed.",
	ErrScheduleOrder: map[string]string{
		"prequeueAt": "The pre-queue must open before the sale, which needs an opening time.",
		"closesAt":   "The sale must close after it opens (and after the pre-queue opens).",
	},

	ProductsTitle:    "Products of {room}",
	ProductsCaption:  "Products (scroll sideways on a narrow screen)",
	NoProducts:       "There are no products yet.",
	AddProduct:       "Add a product",
	EditProduct:      "Edit {name}",
	ProductName:      "Name",
	Price:            "Price",
	PriceHint:        "In {currency}, such as {example}",
	PriceHintAdd:     "In the currency's main unit, such as 12950 for KRW or 129.50 for USD",
	ErrCurrencyX:     "Codes starting with X (XXX, XTS, XAU, XDR…) cannot be used for a sale. Enter a currency such as KRW or USD.",
	Currency:         "Currency",
	Stock:            "Stock",
	StockHint:        "Raising the stock reopens a sold-out room.",
	ImageURL:         "Image address",
	ImageHint:        "An https:// address, or the path of an image on this site (/media/… for an uploaded one)",
	Image:            "Image",
	ImageFile:        "Or upload an image file",
	ImageFileHint:    "PNG, JPEG, GIF or WebP, at most {kb} KB. An upload replaces the address above.",
	ImageBroken:      "This image did not load. Check its address, or upload the file again.",
	ErrImageType:     "This file is not an image of an accepted type (PNG, JPEG, GIF or WebP).",
	ErrImageMissing:  "There is no image at this address on this site. Upload the file, or type the address of an uploaded image (/media/…) or an https:// address.",
	ErrImageTooLarge: "The upload was too large, so nothing was saved. A product image is at most {kb} KB.",
	AddButton:        "Add",
	ProductSaved:     "Product saved.",
	ProductAdded:     "Product added.",
	ProductDeleted:   "Product deleted.",
	Restocked:        "The stock went up: the room is open again (no longer sold out).",
	SoldOutNow:       "This room is sold out now. Raising a stock reopens it.",
	DeleteProduct:    "Delete the product",
	DeleteProductHnt: "A product with orders cannot be deleted: set its stock to 0 instead.",
	BackToProducts:   "Back to the products",
	BackToRooms:      "Back to the rooms",
	ErrPrice:         "Enter an amount of 0 or more, with at most {n} decimals.",
	ErrProduct: map[string]string{
		"name":     "The name must be 1 to 200 characters of plain text.",
		"price":    "The price is too large.",
		"currency": "Must be an ISO 4217 code of three capital letters, such as KRW or USD.",
		"stock":    "Must be between 0 and 1000000000.",
		"imageURL": "Must be empty, an https:// address or a path starting with / (at most 2048 bytes).",
	},
	ErrHasOrders: "The product has orders, so it cannot be deleted: set its stock to 0.",
	ErrNoProduct: "There is no such product.",
}

// RoomsTextFor returns the rooms pages' texts in lang ("ko" or "en"; anything
// else is English).
func RoomsTextFor(lang string) RoomsText {
	if lang == "ko" {
		return roomsKorean
	}
	return roomsEnglish
}

// PhaseName is the name of a schedule phase.
func (t RoomsText) PhaseName(phase string) string {
	switch phase {
	case "scheduled":
		return t.PhaseScheduled
	case "prequeue":
		return t.PhasePrequeue
	case "closed":
		return t.PhaseClosed
	}
	return t.PhaseOpen
}

// ModeName is the name of a room mode, or the mode itself when unknown.
func (t RoomsText) ModeName(mode string) string {
	if n, ok := t.ModeNames[mode]; ok {
		return n
	}
	return mode
}
