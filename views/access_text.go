package views

// AccessText are the buyer's texts of a room whose access is limited: an
// access code, or the shop's sign-in.
type AccessText struct {
	// CodeLabel labels the join form's code field; CodeHint is said under
	// it; CodeIntro leads a room whose line takes a code.
	CodeLabel string
	CodeHint  string
	CodeIntro string
	// MembersIntro leads a room that requires the shop's sign-in, and
	// SignIn links to the shop's sign-in page.
	MembersIntro string
	SignIn       string
	// CodeLineIntro and MembersLineIntro lead a room with a line for code
	// holders, or for members, beside a line open to all.
	CodeLineIntro    string
	MembersLineIntro string
	// Refused is the heading of every refusal below.
	Refused string
	// CodeRequired refuses a join without a code; CodeUnknown,
	// CodeWrongRoom, CodeUsedUp and CodeExpired a code, saying why;
	// CodeThrottled ({t}) a network whose refused codes were spent.
	CodeRequired  string
	CodeUnknown   string
	CodeWrongRoom string
	CodeUsedUp    string
	CodeExpired   string
	CodeThrottled string
	// IdentityRequired refuses a join without the shop's sign-in;
	// IdentityExpired, IdentityNotYet, IdentityWrongRoom and
	// IdentityInvalid a sign-in the shop sent, saying why; IdentityOff a
	// sign-in sent to a room that takes none.
	IdentityRequired  string
	IdentityExpired   string
	IdentityNotYet    string
	IdentityWrongRoom string
	IdentityInvalid   string
	IdentityOff       string
	// Checking is said while a code is checked.
	Checking string
}

var accessEnglish = AccessText{
	CodeLabel:         "Access code",
	CodeHint:          "Enter the code you were sent. Letters and digits; spaces and dashes do not matter.",
	CodeIntro:         "This sale is for code holders: enter your access code to join the line.",
	MembersIntro:      "This sale is for signed-in members: sign in at the shop, and you will be brought back here.",
	SignIn:            "Sign in at the shop",
	CodeLineIntro:     "Have an access code? Enter it to join the code holders' line. Without one, you join the line open to everyone.",
	MembersLineIntro:  "Members who sign in at the shop join the members' line.",
	Refused:           "You cannot join with this",
	CodeRequired:      "This line takes an access code. Enter the code you were sent.",
	CodeUnknown:       "This access code is not valid. Check it and try again.",
	CodeWrongRoom:     "This access code is for another sale.",
	CodeUsedUp:        "This access code has already been used as many times as it allows.",
	CodeExpired:       "This access code has expired.",
	CodeThrottled:     "Too many codes that are not valid came from your network. Try again in {t}.",
	IdentityRequired:  "This sale is for signed-in members. Sign in at the shop to join the line.",
	IdentityExpired:   "Your sign-in has expired. Sign in at the shop again.",
	IdentityNotYet:    "Your sign-in is not valid yet. Check your device's clock, or sign in at the shop again.",
	IdentityWrongRoom: "Your sign-in is for another sale. Sign in from this sale's link at the shop.",
	IdentityInvalid:   "Your sign-in could not be checked. Sign in at the shop again.",
	IdentityOff:       "This sale does not take a sign-in from the shop: join the line without it.",
	Checking:          "Checking your code…",
}

var accessKorean = AccessText{
	CodeLabel:         "입장 코드",
	CodeHint:          "받으신 코드를 입력해 주세요. 영문과 숫자이며, 띄어쓰기와 하이픈은 상관없습니다.",
	CodeIntro:         "코드를 받으신 분만 참여할 수 있는 판매입니다. 입장 코드를 입력하고 줄을 서 주세요.",
	MembersIntro:      "로그인한 회원만 참여할 수 있는 판매입니다. 쇼핑몰에서 로그인하면 이곳으로 돌아옵니다.",
	SignIn:            "쇼핑몰에서 로그인하기",
	CodeLineIntro:     "입장 코드가 있으신가요? 코드를 입력하면 코드 소지자 줄에 섭니다. 코드가 없으면 누구나 서는 줄에 섭니다.",
	MembersLineIntro:  "쇼핑몰에서 로그인한 회원은 회원 줄에 섭니다.",
	Refused:           "이것으로는 참여할 수 없습니다",
	CodeRequired:      "이 줄은 입장 코드가 필요합니다. 받으신 코드를 입력해 주세요.",
	CodeUnknown:       "유효하지 않은 입장 코드입니다. 확인 후 다시 입력해 주세요.",
	CodeWrongRoom:     "다른 판매의 입장 코드입니다.",
	CodeUsedUp:        "이 입장 코드는 허용된 횟수만큼 이미 사용되었습니다.",
	CodeExpired:       "기한이 지난 입장 코드입니다.",
	CodeThrottled:     "회원님의 네트워크에서 유효하지 않은 코드가 너무 많이 입력되었습니다. {t} 후에 다시 시도해 주세요.",
	IdentityRequired:  "로그인한 회원만 참여할 수 있는 판매입니다. 쇼핑몰에서 로그인한 뒤 줄을 서 주세요.",
	IdentityExpired:   "로그인이 만료되었습니다. 쇼핑몰에서 다시 로그인해 주세요.",
	IdentityNotYet:    "로그인이 아직 유효하지 않습니다. 기기의 시계를 확인하거나 쇼핑몰에서 다시 로그인해 주세요.",
	IdentityWrongRoom: "다른 판매의 로그인입니다. 쇼핑몰에서 이 판매의 링크로 들어와 주세요.",
	IdentityInvalid:   "로그인을 확인할 수 없습니다. 쇼핑몰에서 다시 로그인해 주세요.",
	IdentityOff:       "이 판매는 쇼핑몰 로그인을 받지 않습니다. 로그인 없이 줄을 서 주세요.",
	Checking:          "코드를 확인하는 중…",
}

// AccessTextFor returns the access texts in lang ("ko" or "en"; anything
// else is English). CodeThrottled keeps its {t}: the wait.
func AccessTextFor(lang string) AccessText {
	if lang == "ko" {
		return accessKorean
	}
	return accessEnglish
}

// Script returns the texts the page's script says, by the API's error
// codes.
func (a AccessText) Script() map[string]string {
	return map[string]string{
		"code_required": a.CodeRequired, "code_unknown": a.CodeUnknown, "code_wrong_room": a.CodeWrongRoom,
		"code_used_up": a.CodeUsedUp, "code_expired": a.CodeExpired, "code_throttled": a.CodeThrottled,
		"identity_required": a.IdentityRequired, "identity_expired": a.IdentityExpired,
		"identity_not_yet_valid": a.IdentityNotYet, "identity_wrong_room": a.IdentityWrongRoom,
		"identity_invalid": a.IdentityInvalid, "identity_not_taken": a.IdentityOff,
		"refused": a.Refused, "signIn": a.SignIn, "checking": a.Checking,
	}
}
