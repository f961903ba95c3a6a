package views

// ConsoleText is the console frame's and sign-in page's texts in one
// language. Other console pages keep their texts in their own files.
type ConsoleText struct {
	Lang        string
	Console     string
	SkipToMain  string
	NavLabel    string
	Rooms       string
	Orders      string
	Attribution string
	Audit       string
	SignedInAs  string // {name}
	SignOut     string

	SignIn          string
	SignInIntro     string
	OperatorSignIn  string
	Name            string
	Password        string
	TokenSignIn     string
	TokenHint       string
	Token           string
	WrongSignIn     string
	TooManyFailures string // {s}
	AccountLocked   string // {m}
	SignInBusy      string
	NoSignIn        string
	NoSignInHow     string
	NoDatabase      string

	ErrorTitle      string
	ErrForbidden    string
	ErrBadCSRF      string
	ErrNotFound     string
	ErrUnavailable  string
	ErrTooLarge     string
	ErrBadRequest   string
	BackToConsole   string
	SessionEnded    string
	TitleForbidden  string
	TitleNotFound   string
	TitleTrouble    string
	TitleTooMany    string
	TitleBadRequest string
}

var consoleKorean = ConsoleText{
	Lang:        "ko",
	Console:     "운영 콘솔",
	SkipToMain:  "본문으로 건너뛰기",
	NavLabel:    "콘솔 메뉴",
	Rooms:       "대기실",
	Orders:      "주문",
	Attribution: "유입 경로",
	Audit:       "변경 기록",
	SignedInAs:  "{name}(으)로 로그인됨",
	SignOut:     "로그아웃",

	SignIn:          "콘솔 로그인",
	SignInIntro:     "운영자 계정 또는 관리자 토큰으로 로그인하세요.",
	OperatorSignIn:  "운영자 계정",
	Name:            "이름",
	Password:        "비밀번호",
	TokenSignIn:     "관리자 토큰",
	TokenHint:       "서버의 ADMIN_TOKEN 값입니다.",
	Token:           "토큰",
	WrongSignIn:     "이름, 비밀번호 또는 토큰이 맞지 않습니다.",
	TooManyFailures: "로그인 실패가 너무 많습니다. {s}초 후에 다시 시도하세요.",
	AccountLocked:   "이 계정의 로그인 실패가 너무 많습니다. {m}분 후에 다시 시도하거나, 전에 로그인한 적 있는 브라우저에서 로그인하세요.",
	SignInBusy:      "지금은 로그인 요청이 몰려 확인할 수 없습니다. 잠시 후 다시 시도하세요.",
	NoSignIn:        "콘솔 로그인이 설정되지 않았습니다.",
	NoSignInHow:     "서버에 ADMIN_TOKEN을 설정하거나, `waitingroom admin add-user 이름` 명령으로 운영자를 추가하세요(DATABASE_URL 필요).",
	NoDatabase:      "콘솔은 데이터베이스에 세션을 저장합니다. 데이터베이스가 준비되면 다시 시도하세요.",

	ErrorTitle:      "문제가 생겼습니다",
	ErrForbidden:    "이 작업을 할 수 없습니다.",
	ErrBadCSRF:      "양식이 만료되었거나 다른 사이트에서 보낸 요청입니다. 페이지를 새로 고친 뒤 다시 시도하세요. 아무것도 바뀌지 않았습니다.",
	ErrNotFound:     "찾는 항목이 없습니다.",
	ErrUnavailable:  "잠시 처리할 수 없습니다. 잠시 후 다시 시도하세요.",
	ErrTooLarge:     "보낸 양식이 너무 큽니다.",
	ErrBadRequest:   "요청을 이해하지 못했습니다.",
	BackToConsole:   "콘솔로 돌아가기",
	SessionEnded:    "로그아웃되었습니다.",
	TitleForbidden:  "허용되지 않은 요청",
	TitleNotFound:   "찾을 수 없음",
	TitleTrouble:    "일시적인 문제",
	TitleTooMany:    "잠시 후 다시 시도",
	TitleBadRequest: "잘못된 요청",
}

var consoleEnglish = ConsoleText{
	Lang:        "en",
	Console:     "Console",
	SkipToMain:  "Skip to content",
	NavLabel:    "Console",
	Rooms:       "Rooms",
	Orders:      "Orders",
	Attribution: "Attribution",
	Audit:       "Audit log",
	SignedInAs:  "Signed in as {name}",
	SignOut:     "Sign out",

	SignIn:          "Sign in to the console",
	SignInIntro:     "Sign in with an operator account or the admin token.",
	OperatorSignIn:  "Operator account",
	Name:            "Name",
	Password:        "Password",
	TokenSignIn:     "Admin token",
	TokenHint:       "The server's ADMIN_TOKEN.",
	Token:           "Token",
	WrongSignIn:     "That name, password or token is not right.",
	TooManyFailures: "Too many failed sign-ins. Try again in {s} seconds.",
	AccountLocked:   "Too many failed sign-ins for this account. Try again in {m} minutes, or from a browser that signed in before.",
	SignInBusy:      "Too many sign-ins are being checked right now. Try again in a moment.",
	NoSignIn:        "Console sign-in is not set up.",
	NoSignInHow:     "Set ADMIN_TOKEN on the server, or add an operator with `waitingroom admin add-user NAME` (needs DATABASE_URL).",
	NoDatabase:      "The console keeps its sessions in the database. Try again once the database is ready.",

	ErrorTitle:      "Something went wrong",
	ErrForbidden:    "You cannot do that.",
	ErrBadCSRF:      "This form has expired or was sent from another site. Reload the page and try again. Nothing was changed.",
	ErrNotFound:     "There is nothing here.",
	ErrUnavailable:  "This cannot be done right now. Please try again in a moment.",
	ErrTooLarge:     "The form sent is too large.",
	ErrBadRequest:   "The request could not be understood.",
	BackToConsole:   "Back to the console",
	SessionEnded:    "You are signed out.",
	TitleForbidden:  "Not allowed",
	TitleNotFound:   "Not found",
	TitleTrouble:    "A passing problem",
	TitleTooMany:    "Try again shortly",
	TitleBadRequest: "Bad request",
}

// ConsoleTextFor returns the console texts of lang ("ko" or "en").
func ConsoleTextFor(lang string) ConsoleText {
	if lang == "ko" {
		return consoleKorean
	}
	return consoleEnglish
}

// StatusHeading names an HTTP status in words, for a console error page.
func (t ConsoleText) StatusHeading(status int) string {
	switch {
	case status == 400 || status == 413:
		return t.TitleBadRequest
	case status == 401 || status == 403:
		return t.TitleForbidden
	case status == 404:
		return t.TitleNotFound
	case status == 429:
		return t.TitleTooMany
	case status >= 500:
		return t.TitleTrouble
	}
	return t.ErrorTitle
}
