package views

// GateFormText are the console's texts of a room's gate settings and API
// key.
type GateFormText struct {
	Legend, Hint                       string
	TargetURL, TargetURLHint           string
	SessionSeconds, SessionSecondsHint string
	SessionMode, ModeIdle, ModeFixed   string
	FailOpen, FailOpenHint             string
	Protect, ProtectHint               string
	APIKey, KeySet, NoKey              string
	NewKey, NewKeyHint                 string
	// KeyShownOnce and CopyHint go with a key just made.
	KeyShownOnce, CopyHint string
	// Err are the gate fields' errors: what each must be.
	Err map[string]string
}

var gateFormEnglish = GateFormText{
	Legend:             "Gate: an outside shop",
	Hint:               "With a target URL, a buyer whose turn comes is sent on to that shop with a single-use pass, instead of this room's order form.",
	TargetURL:          "Target URL",
	TargetURLHint:      "The shop page buyers are sent to, such as https://shop.example/checkout. Empty: the built-in order form.",
	SessionSeconds:     "Session length",
	SessionSecondsHint: "30 to 86400 seconds. Each session holds one active slot.",
	SessionMode:        "Session ends",
	ModeIdle:           "after this long without activity",
	ModeFixed:          "this long after entering the shop",
	FailOpen:           "Let buyers through when the waiting room cannot be reached",
	FailOpenHint:       "Off (the default): the shop shows a \"please retry\" page while the waiting room is away.",
	Protect:            "Protected paths (reverse proxy)",
	ProtectHint:        "One path prefix a line, such as /checkout; at most 20.",
	APIKey:             "Gate API key",
	KeySet:             "This room has an API key. Making a new one stops the old one at once.",
	NoKey:              "This room has no API key yet. The Go middleware (package gate) and the session API (redeem, renew, end) need one; the nginx and reverse-proxy guards do not.",
	NewKey:             "New API key",
	NewKeyHint:         "The key is shown once; only its hash is kept.",
	KeyShownOnce:       "Here is the new API key. It is shown only this once: copy it now into the shop's configuration.",
	CopyHint:           "Select the key and copy it (Ctrl+C or ⌘C).",
	Err: map[string]string{
		"targetURL":      "Must be empty or an absolute http(s) address without a user name or #fragment, at most 2048 bytes.",
		"sessionSeconds": "Must be between 30 and 86400 seconds.",
		"sessionMode":    "Pick how sessions end from the list.",
		"protect":        "At most 20 paths, each starting with a single /, at most 200 bytes, without .., a query, spaces or backslashes.",
	},
}

var gateFormKorean = GateFormText{
	Legend:             "게이트: 외부 쇼핑몰",
	Hint:               "대상 주소가 있으면 차례가 된 구매자는 이 대기실의 주문 양식 대신 1회용 입장권을 들고 그 쇼핑몰로 이동합니다.",
	TargetURL:          "대상 주소",
	TargetURLHint:      "구매자가 이동할 쇼핑몰 페이지입니다(예: https://shop.example/checkout). 비워 두면 기본 주문 양식을 씁니다.",
	SessionSeconds:     "세션 시간",
	SessionSecondsHint: "30초에서 86400초 사이입니다. 세션마다 입장 자리 하나를 차지합니다.",
	SessionMode:        "세션 종료",
	ModeIdle:           "활동 없이 이 시간이 지나면",
	ModeFixed:          "쇼핑몰 입장 후 이 시간이 지나면",
	FailOpen:           "대기실에 연결할 수 없을 때 구매자를 통과시키기",
	FailOpenHint:       "끄면(기본값) 대기실이 응답하지 않는 동안 쇼핑몰에 \"잠시 후 다시 시도\" 페이지가 나옵니다.",
	Protect:            "보호할 경로(리버스 프록시)",
	ProtectHint:        "한 줄에 경로 접두어 하나(예: /checkout), 최대 20개입니다.",
	APIKey:             "게이트 API 키",
	KeySet:             "이 대기실에는 API 키가 있습니다. 새 키를 만들면 이전 키는 즉시 쓸 수 없습니다.",
	NoKey:              "아직 API 키가 없습니다. Go 미들웨어(gate 패키지)와 세션 API(입장권 사용, 연장, 종료)에는 키가 필요하지만, nginx와 리버스 프록시 방식에는 필요하지 않습니다.",
	NewKey:             "새 API 키",
	NewKeyHint:         "키는 한 번만 보여 주며 해시만 저장됩니다.",
	KeyShownOnce:       "새 API 키입니다. 지금 한 번만 보여 드리니 바로 쇼핑몰 설정에 복사해 두세요.",
	CopyHint:           "키를 선택해 복사하세요(Ctrl+C 또는 ⌘C).",
	Err: map[string]string{
		"targetURL":      "비워 두거나, 사용자 이름과 #조각 없이 2048바이트 이하의 절대 http(s) 주소여야 합니다.",
		"sessionSeconds": "30초에서 86400초 사이여야 합니다.",
		"sessionMode":    "목록에서 세션 종료 방식을 고르세요.",
		"protect":        "최대 20개, 각각 / 하나로 시작하고 200바이트 이하이며 .., 쿼리, 공백, 역슬래시가 없어야 합니다.",
	},
}

// GateFormTextFor returns the gate form's texts in lang (ko or en).
func GateFormTextFor(lang string) GateFormText {
	if lang == "ko" {
		return gateFormKorean
	}
	return gateFormEnglish
}
