package views

// AccessFormText are the console's texts of who may join a room: its
// access, and the shop's identities.
type AccessFormText struct {
	Legend, Hint                  string
	Access, AccessHint            string
	AccessOpen, AccessCode        string
	Identity, IdentityHint        string
	IdentityOff, IdentityOptional string
	IdentityRequired              string
	JWKSURL, JWKSURLHint          string
	Keys, KeysHint                string
	SignInURL, SignInURLHint      string
	Staff, StaffHint              string
	// Lines label the room's named lines; LineName, LineShare and
	// LineAccess label a row's fields ({n}: the row), LineOpen, LineCode
	// and LineIdentity name who may join a line.
	Lines, LinesHint                 string
	LineName, LineShare, LineAccess  string
	LineOpen, LineCode, LineIdentity string
	// ErrLineShare refuses a row with a name and no share; ErrShares
	// shares that do not add up to 1 ({sum}: what they add up to);
	// ErrLineInUse a line renamed or removed while people are in it.
	ErrLineShare, ErrShares, ErrLineInUse string
	// Err are the access fields' errors: what each must be.
	Err map[string]string
}

var accessFormEnglish = AccessFormText{
	Legend:           "Who may join, and who skips the line",
	Hint:             "Limit new places to code holders or to the shop's signed-in members. Buyers already in line keep their places.",
	Access:           "Access",
	AccessHint:       "With codes, a new place takes an access code of this room (make them on the room's Access codes page).",
	AccessOpen:       "Open to anyone",
	AccessCode:       "Access code holders",
	Identity:         "Shop sign-in",
	IdentityHint:     "The shop signs its buyer's identity (a JWT with sub, exp and aud = this room's name): one identity holds one place on any number of devices.",
	IdentityOff:      "Not used",
	IdentityOptional: "Optional: a signed-in buyer keeps one place",
	IdentityRequired: "Required: members only",
	JWKSURL:          "Shop's key set URL (JWKS)",
	JWKSURLHint:      "https, such as https://shop.example/.well-known/jwks.json. Or paste the keys below, not both.",
	Keys:             "Shop's public keys",
	KeysHint:         "A JWKS, or PEM public keys (BEGIN PUBLIC KEY). Never the private key.",
	SignInURL:        "Shop's sign-in page",
	SignInURLHint:    "Where buyers without a sign-in are sent; needed when sign-in is required.",
	Staff:            "Staff networks (skip the line)",
	StaffHint:        "One network a line, such as 203.0.113.0/24: joins from them are let in at once, outside the line, each in the audit log. Test links are on the room's Test links page.",
	Lines:            "Lines",
	LinesHint:        "Optional: up to 4 named lines, each let in at its share of the admission rate (the shares add up to 1, such as 0.7 and 0.3), each with who may join it. An empty row is no line; without lines the room has one line, open as set above. A pre-queue is drawn into each line.",
	LineName:         "Line {n}: name",
	LineShare:        "Line {n}: share",
	LineAccess:       "Line {n}: who may join",
	LineOpen:         "Anyone",
	LineCode:         "Access code holders",
	LineIdentity:     "Signed-in members",
	ErrLineShare:     "Give the line's share of the rate: a number above 0 and at most 1, such as 0.7.",
	ErrShares:        "The lines' shares must add up to 1; they add up to {sum}.",
	ErrLineInUse:     "A line with people in it keeps its name and its place in the list: rename or remove it once it is empty. Its share and who may join can change at any time.",
	Err: map[string]string{
		"staffNetworks":   "Give at most 20 networks, one a line, such as 203.0.113.0/24 or 2001:db8::/48, none wider than /16 (IPv4) or /32 (IPv6).",
		"access":          "Choose who may join. With lines, choose Open to anyone: each line says who may join it.",
		"lines":           "Give at most 4 lines, each with a different name of 1 to 32 letters, digits, - and _ and a share above 0 and at most 1. A line of signed-in members needs the shop's sign-in (optional or required).",
		"identity":        "Choose how the shop's sign-in is used.",
		"identityJWKSURL": "The shop's keys are needed: an https key set URL the server may fetch (no private, link-local or metadata address), or pasted keys.",
		"identityKeys":    "Paste the shop's public keys (a JWKS or PEM public keys, at most 64 KiB), or give a key set URL, not both.",
		"signInURL":       "Give the shop's sign-in page as an absolute http(s) URL; it is needed when sign-in is required.",
	},
}

var accessFormKorean = AccessFormText{
	Legend:           "참여 대상과 줄 서지 않는 사람",
	Hint:             "새 자리를 코드 소지자나 쇼핑몰에 로그인한 회원으로 제한합니다. 이미 줄을 선 구매자의 자리는 그대로 유지됩니다.",
	Access:           "참여 방식",
	AccessHint:       "코드를 선택하면 새 자리에 이 대기실의 입장 코드가 필요합니다 (대기실의 입장 코드 페이지에서 만드세요).",
	AccessOpen:       "누구나 참여",
	AccessCode:       "입장 코드 소지자만",
	Identity:         "쇼핑몰 로그인",
	IdentityHint:     "쇼핑몰이 구매자의 신원(sub, exp, aud = 이 대기실 이름을 담은 JWT)에 서명합니다. 한 신원은 기기가 몇 대든 한 자리만 갖습니다.",
	IdentityOff:      "사용 안 함",
	IdentityOptional: "선택: 로그인한 구매자는 한 자리만 유지",
	IdentityRequired: "필수: 회원 전용",
	JWKSURL:          "쇼핑몰 키 세트 주소 (JWKS)",
	JWKSURLHint:      "https 주소입니다. 예: https://shop.example/.well-known/jwks.json. 또는 아래에 키를 붙여 넣으세요. 둘 다는 안 됩니다.",
	Keys:             "쇼핑몰 공개 키",
	KeysHint:         "JWKS 또는 PEM 공개 키(BEGIN PUBLIC KEY)입니다. 개인 키는 절대 넣지 마세요.",
	SignInURL:        "쇼핑몰 로그인 페이지",
	SignInURLHint:    "로그인하지 않은 구매자를 보낼 곳입니다. 로그인이 필수이면 꼭 필요합니다.",
	Staff:            "직원 네트워크 (줄 서지 않음)",
	StaffHint:        "한 줄에 네트워크 하나씩 적습니다. 예: 203.0.113.0/24. 이 네트워크에서 참여하면 줄 밖에서 바로 입장하며, 모두 감사 기록에 남습니다. 테스트 링크는 대기실의 테스트 링크 페이지에 있습니다.",
	Lines:            "대기 줄",
	LinesHint:        "선택 사항: 이름 붙인 대기 줄을 최대 4개까지 둡니다. 줄마다 입장 속도에서 제 비율만큼 입장하고(비율의 합은 1, 예: 0.7과 0.3), 줄마다 참여 대상을 정합니다. 빈 행은 줄이 아닙니다. 줄이 없으면 위에서 정한 대로 줄이 하나입니다. 사전 대기는 줄마다 추첨합니다.",
	LineName:         "줄 {n} 이름",
	LineShare:        "줄 {n} 비율",
	LineAccess:       "줄 {n} 참여 대상",
	LineOpen:         "누구나",
	LineCode:         "입장 코드 소지자",
	LineIdentity:     "로그인한 회원",
	ErrLineShare:     "줄의 비율을 0보다 크고 1 이하인 숫자로 입력하세요. 예: 0.7.",
	ErrShares:        "대기 줄 비율의 합은 1이어야 합니다. 지금 합은 {sum}입니다.",
	ErrLineInUse:     "사람이 있는 줄은 이름과 순서를 바꾸거나 지울 수 없습니다. 줄이 빈 뒤에 바꾸세요. 비율과 참여 대상은 언제든 바꿀 수 있습니다.",
	Err: map[string]string{
		"staffNetworks":   "네트워크는 한 줄에 하나씩 최대 20개까지 주세요. 예: 203.0.113.0/24 또는 2001:db8::/48. IPv4는 /16, IPv6는 /32보다 넓으면 안 됩니다.",
		"access":          "참여 방식을 선택해 주세요. 대기 줄이 있으면 '누구나 참여'를 고르세요. 줄마다 참여 대상을 정합니다.",
		"lines":           "대기 줄은 최대 4개이며, 줄마다 서로 다른 이름(영문, 숫자, -, _ 1~32자)과 0보다 크고 1 이하인 비율이 있어야 합니다. 로그인한 회원 줄에는 쇼핑몰 로그인(선택 또는 필수)이 필요합니다.",
		"identity":        "쇼핑몰 로그인 사용 방식을 선택해 주세요.",
		"identityJWKSURL": "쇼핑몰 키가 필요합니다. 서버가 가져올 수 있는 https 키 세트 주소(사설, 링크 로컬, 메타데이터 주소 제외)나 붙여 넣은 키를 주세요.",
		"identityKeys":    "쇼핑몰 공개 키(JWKS 또는 PEM 공개 키, 최대 64 KiB)를 붙여 넣거나 키 세트 주소를 주세요. 둘 다는 안 됩니다.",
		"signInURL":       "쇼핑몰 로그인 페이지를 http(s) 절대 주소로 주세요. 로그인이 필수이면 꼭 필요합니다.",
	},
}

// AccessFormTextFor returns the access form's texts in lang ("ko" or
// "en"; anything else is English).
func AccessFormTextFor(lang string) AccessFormText {
	if lang == "ko" {
		return accessFormKorean
	}
	return accessFormEnglish
}
