package views

// CodesText is the texts of the console's access-codes page in one
// language. Strings with {room}, {n}, {m} or {max} are filled in by the
// server.
type CodesText struct {
	Lang string

	Nav        string // the link to this page from other console pages
	Title      string // {room}
	Intro      string
	ByLine     string
	LineCap    string
	NoCodes    string
	Line       string
	OnlyLine   string // the name shown for the room's only line ("")
	Codes      string
	Uses       string
	Used       string
	Left       string
	Latest     string // {n}
	LatestCap  string
	Hint       string
	Expires    string
	Never      string
	Created    string
	Export     string
	Generate   string
	Count      string
	CountHint  string // {max}
	UsesHint   string
	LineHint   string
	ExpiresAt  string
	ExpireHint string // {zone}
	Make       string
	Upload     string
	File       string
	FileHint   string // {max}
	Add        string
	NewCodes   string // {n}
	NewCodesNB string
	Imported   string // {n}, {m}
	FixErrors  string
	ErrOff     string // no order database
	ErrNoFile  string
	ErrTooBig  string
	ErrCount   string // {max}
	ErrUses    string // {max}
	ErrLine    string
	ErrExpires string
	ErrCode    string // {n}: the code's row in the file
	ErrCSV     string // {n}
	ErrEmpty   string
	Revoke     string
	RevokeHint string
	RevokeCode string
	RevokeDo   string
	Revoked    string // {code}
	ErrNoCode  string
	// RevokedMany says a batch revoked {n} codes, {m} of them unknown;
	// ErrBatch refuses a batch over {max} codes.
	RevokedMany string
	ErrBatch    string
}

var codesEnglish = CodesText{
	Lang:        "en",
	Nav:         "Access codes",
	Title:       "Access codes of {room}",
	Intro:       "Codes for a presale: each lets its holder into a line, once or a set number of times, until it expires. The database keeps the codes hashed, so a generated code is shown once, here, right after it is made.",
	ByLine:      "By line",
	LineCap:     "The room's codes by line, with their uses",
	NoCodes:     "No code yet.",
	Line:        "Line",
	OnlyLine:    "(the room's line)",
	Codes:       "Codes",
	Uses:        "Uses",
	Used:        "Used",
	Left:        "Left",
	Latest:      "The latest {n} codes",
	LatestCap:   "The room's latest codes by their last three characters, newest first (scrolls sideways on narrow screens)",
	Hint:        "Ends with",
	Expires:     "Expires",
	Never:       "never",
	Created:     "Made",
	Export:      "Export every code (CSV)",
	Generate:    "Generate codes",
	Count:       "How many",
	CountHint:   "From 1 to {max}.",
	UsesHint:    "Uses per code: 1 for a single-use code.",
	LineHint:    "The line the codes let into: letters, digits, - and _. Leave empty for the room's line.",
	ExpiresAt:   "Expires at",
	ExpireHint:  "Optional, in {zone} time.",
	Make:        "Generate",
	Upload:      "Upload codes",
	File:        "CSV file",
	FileHint:    "One code per row, as your CRM exports them (4 to 64 letters, digits or _, spaces and dashes ignored). A first row that names a column code, access_code, coupon or the like is a header, and that column is read. At most {max} codes.",
	Add:         "Upload",
	NewCodes:    "New codes: {n}. Copy them now: they are not shown again.",
	NewCodesNB:  "The new codes",
	Imported:    "Added: {n}. Skipped: {m} (the room had them, or the file repeated them).",
	FixErrors:   "The codes were not made: fix what is marked.",
	ErrOff:      "Access codes need the order database, which this server has not attached.",
	ErrNoFile:   "Choose a CSV file of codes.",
	ErrTooBig:   "The file is too large: at most {max} codes.",
	ErrCount:    "Give a whole number from 1 to {max}.",
	ErrUses:     "Give a whole number of uses from 1 to {max}.",
	ErrLine:     "Use up to 32 letters, digits, - and _.",
	ErrExpires:  "Give a time in the future, or leave it empty.",
	ErrCode:     "Row {n} of the file is not a code of 4 to 64 letters, digits or _.",
	ErrCSV:      "The file does not read as CSV at row {n}.",
	ErrEmpty:    "The file holds no code.",
	Revoke:      "Revoke a code",
	RevokeHint:  "Leaked codes, one a line (up to 1000): they let nobody in from now on. The places they already bought stay.",
	RevokeCode:  "Codes",
	RevokeDo:    "Revoke",
	Revoked:     "Revoked the code {code}.",
	ErrNoCode:   "The room has no such code.",
	RevokedMany: "Revoked {n} codes; {m} of those given are not this room's.",
	ErrBatch:    "Give at most {max} codes at once.",
}

var codesKorean = CodesText{
	Lang:        "ko",
	Nav:         "접근 코드",
	Title:       "{room}의 접근 코드",
	Intro:       "사전 판매용 코드입니다. 코드마다 정해진 대기 줄에 한 번 또는 정한 횟수만큼, 만료 전까지 들어갈 수 있습니다. 데이터베이스는 코드를 해시로만 보관하므로, 생성한 코드는 만든 직후 이 화면에서 한 번만 보입니다.",
	ByLine:      "대기 줄별",
	LineCap:     "대기실의 대기 줄별 코드와 사용 횟수",
	NoCodes:     "아직 코드가 없습니다.",
	Line:        "대기 줄",
	OnlyLine:    "(대기실의 기본 줄)",
	Codes:       "코드",
	Uses:        "사용 한도",
	Used:        "사용됨",
	Left:        "남음",
	Latest:      "최근 코드 {n}개",
	LatestCap:   "대기실의 최근 코드, 끝 세 글자로 표시, 최신순 (좁은 화면에서는 옆으로 스크롤)",
	Hint:        "끝 글자",
	Expires:     "만료",
	Never:       "없음",
	Created:     "생성",
	Export:      "모든 코드 내보내기 (CSV)",
	Generate:    "코드 생성",
	Count:       "개수",
	CountHint:   "1부터 {max}까지.",
	UsesHint:    "코드당 사용 횟수: 1회용은 1.",
	LineHint:    "코드로 들어갈 대기 줄: 영문, 숫자, -, _. 비워 두면 대기실의 기본 줄입니다.",
	ExpiresAt:   "만료 시각",
	ExpireHint:  "선택 사항, {zone} 시간대 기준.",
	Make:        "생성",
	Upload:      "코드 올리기",
	File:        "CSV 파일",
	FileHint:    "한 행에 코드 하나, CRM에서 내보낸 그대로 (영문, 숫자, _ 4~64자, 공백과 -는 무시). 첫 행에 code, access_code, coupon 같은 열 이름이 있으면 머리글로 보고 그 열을 읽습니다. 최대 {max}개.",
	Add:         "올리기",
	NewCodes:    "새 코드: {n}개. 지금 복사하세요. 다시 보이지 않습니다.",
	NewCodesNB:  "새 코드",
	Imported:    "코드 {n}개 추가, {m}개 건너뜀 (이미 있거나 파일에서 반복됨).",
	FixErrors:   "코드를 만들지 않았습니다. 표시된 곳을 고치세요.",
	ErrOff:      "접근 코드에는 주문 데이터베이스가 필요한데, 이 서버에는 연결되어 있지 않습니다.",
	ErrNoFile:   "코드 CSV 파일을 고르세요.",
	ErrTooBig:   "파일이 너무 큽니다. 최대 {max}개까지입니다.",
	ErrCount:    "1부터 {max}까지의 정수를 입력하세요.",
	ErrUses:     "사용 횟수는 1부터 {max}까지의 정수입니다.",
	ErrLine:     "영문, 숫자, -, _ 최대 32자로 쓰세요.",
	ErrExpires:  "앞으로의 시각을 입력하거나 비워 두세요.",
	ErrCode:     "파일의 {n}번째 행이 영문, 숫자, _ 4~64자 코드가 아닙니다.",
	ErrCSV:      "파일의 {n}번째 행을 CSV로 읽을 수 없습니다.",
	ErrEmpty:    "파일에 코드가 없습니다.",
	Revoke:      "코드 폐기",
	RevokeHint:  "유출된 코드를 한 줄에 하나씩 (최대 1000개): 지금부터 누구도 이 코드로 들어갈 수 없습니다. 이미 받은 자리는 그대로입니다.",
	RevokeCode:  "코드",
	RevokeDo:    "폐기",
	Revoked:     "코드 {code}를 폐기했습니다.",
	ErrNoCode:   "대기실에 그런 코드가 없습니다.",
	RevokedMany: "코드 {n}개를 폐기했습니다. 입력한 것 중 {m}개는 이 대기실의 코드가 아닙니다.",
	ErrBatch:    "한 번에 최대 {max}개까지 입력해 주세요.",
}

// CodesTextFor returns the access-codes page's texts in lang.
func CodesTextFor(lang string) CodesText {
	if lang == "ko" {
		return codesKorean
	}
	return codesEnglish
}
