package flowcontrol

// Seats of a list, as kube-apiserver's list work estimator counts them:
// one seat per objectsPerSeat objects the list may go through, at least
// minSeats and at most maxSeats.
const (
	objectsPerSeat = 100
	minSeats       = 1
	maxSeats       = 10
)

// ListSeats returns the seats of a list (or of a watch that starts with
// the current objects) over a resource holding stored objects, of which
// it returns at most limit (0: no limit). The estimate counts the whole
// resource whatever the namespace or selectors, as kube-apiserver does.
func ListSeats(stored, limit int64) int {
	n := stored
	if limit > 0 && limit < n {
		n = limit
	}
	seats := int((n + objectsPerSeat - 1) / objectsPerSeat)
	return min(max(seats, minSeats), maxSeats)
}
