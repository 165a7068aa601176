package flowcontrol

import "hash/fnv"

// maxHandSize bounds a hand (validation allows at most 8 queues per hand
// for the default 128 queues; larger decks allow less).
const maxHandSize = 64

// flowHash identifies a flow: its FlowSchema's name and its
// distinguisher.
func flowHash(fs, distinguisher string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(fs))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(distinguisher))
	return h.Sum64()
}

// deal draws hand distinct cards from a deck of deck cards, the draws
// chosen by the digits of hash in the mixed radix deck, deck-1, …: the
// same hash always gets the same hand, and two flows rarely share a whole
// hand (shuffle sharding). The cards are appended to out in draw order.
func deal(hash uint64, deck, hand int, out []int) []int {
	hand = min(hand, maxHandSize)
	for i := 0; i < hand; i++ {
		n := uint64(deck - i)
		card := int(hash % n)
		hash /= n
		// card is an index among the cards not yet drawn: skip the drawn
		// ones at or below it, in ascending order.
		for _, d := range sortedCopy(out) {
			if d <= card {
				card++
			}
		}
		out = append(out, card)
	}
	return out
}

func sortedCopy(cards []int) []int {
	var buf [maxHandSize]int
	s := append(buf[:0], cards...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j-1] > s[j]; j-- {
			s[j-1], s[j] = s[j], s[j-1]
		}
	}
	return s
}
