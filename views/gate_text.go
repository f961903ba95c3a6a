package views

// GateText are the texts of gate mode: a room that sends its buyers on to
// an outside shop with a pass.
type GateText struct {
	// ContinueTo is the READY button ({shop}); ReadyHint is said above it.
	ContinueTo string
	ReadyHint  string
	// Going is the hand-off page's heading ({shop}); GoingHint tells a
	// browser without JavaScript to press the button.
	Going     string
	GoingHint string
	// Off refuses a pass in a room that sends buyers to no shop.
	Off string
	// PassUsed refuses a pass that already let a buyer into the shop.
	PassUsed string
	// EnterRefused and EnterRefusedHint answer a pass the shop's callback
	// cannot use; EnterTrouble, a waiting room it cannot reach.
	EnterRefused     string
	EnterRefusedHint string
	EnterTrouble     string
	// EnterStale and EnterStaleHint answer a genuine-looking pass that can
	// no longer be used: its key was rotated away, or a newer pass of the
	// same buyer replaced it.
	EnterStale     string
	EnterStaleHint string
	// OrdersAtShop refuses an order on the room's own order form in a
	// room that sends its buyers to a shop.
	OrdersAtShop string
}

var gateEnglish = GateText{
	ContinueTo:       "Continue to {shop}",
	ReadyHint:        "Your entry pass is valid for {t}: continue to the shop to buy.",
	Going:            "Taking you to {shop}…",
	GoingHint:        "If nothing happens in a moment, press the button.",
	Off:              "This waiting room does not send buyers on to a shop.",
	PassUsed:         "This entry pass has already been used to enter the shop.",
	EnterRefused:     "Entry not possible",
	EnterRefusedHint: "Your entry pass could not be used: it has expired, was already used, or is not for this shop. Please go back to the waiting room.",
	EnterTrouble:     "The waiting room cannot be reached right now. Please retry in a moment.",
	EnterStale:       "This pass can no longer be used",
	EnterStaleHint:   "Go back to the waiting room: if it is still your turn, you can continue from there.",
	OrdersAtShop:     "This room's orders are taken at the shop: when it is your turn, continue to the shop from the waiting room's page.",
}

var gateKorean = GateText{
	ContinueTo:       "{shop}에서 구매 계속하기",
	ReadyHint:        "입장권은 {t} 동안 유효합니다. 쇼핑몰로 이동해 구매해 주세요.",
	Going:            "{shop} 페이지로 이동하는 중…",
	GoingHint:        "잠시 후에도 이동하지 않으면 버튼을 눌러 주세요.",
	Off:              "이 대기실은 쇼핑몰로 연결되지 않습니다.",
	PassUsed:         "이 입장권은 이미 쇼핑몰 입장에 사용되었습니다.",
	EnterRefused:     "입장할 수 없습니다",
	EnterRefusedHint: "입장권을 사용할 수 없습니다. 만료되었거나, 이미 사용되었거나, 이 쇼핑몰의 입장권이 아닙니다. 대기실로 돌아가 주세요.",
	EnterTrouble:     "지금은 대기실에 연결할 수 없습니다. 잠시 후 다시 시도해 주세요.",
	EnterStale:       "이 입장권은 더 이상 사용할 수 없습니다",
	EnterStaleHint:   "대기실로 돌아가 주세요. 아직 차례가 남아 있으면 대기실에서 계속 진행할 수 있습니다.",
	OrdersAtShop:     "이 대기실의 주문은 쇼핑몰에서 받습니다. 차례가 되면 대기실 페이지에서 쇼핑몰로 이동해 주세요.",
}

// GateTextFor returns the gate texts in lang ("ko" or "en"; anything
// else is English). ReadyHint keeps its {t}: the pass's time.
func GateTextFor(lang string) GateText {
	if lang == "ko" {
		return gateKorean
	}
	return gateEnglish
}
