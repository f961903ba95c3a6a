package views

// Assets are the fingerprinted URLs of the page's stylesheet and script.
type Assets struct {
	CSS string
	JS  string
}

// RoomPage is the data of the shared, cacheable waiting-room page. It holds
// nothing about the visitor, so its bytes are the same for everyone.
type RoomPage struct {
	Room   string
	Title  string
	T      Messages
	Assets Assets
}

// StatusPage is the per-visitor page for browsers without JavaScript.
type StatusPage struct {
	Room    string
	Title   string
	T       Messages
	Assets  Assets
	Status  string // WAITING, READY or NOT_ENTERED
	Rank    int64
	Waiting int64
	ETA     int64
	Refresh int
	Token   string
}

// ErrorPage is an HTML error answer.
type ErrorPage struct {
	Status  int
	Message string
	Room    string // when set, a link back to the room
	Retry   bool   // whether retrying can succeed
	T       Messages
	Assets  Assets
}
