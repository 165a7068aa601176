package predicate

// And lets an event through when every predicate does (all of them when
// there are none). It stops at the first false.
func And(ps ...Predicate) Predicate {
	return Funcs{
		CreateFunc: func(e CreateEvent) bool { return all(ps, func(p Predicate) bool { return p.Create(e) }) },
		UpdateFunc: func(e UpdateEvent) bool { return all(ps, func(p Predicate) bool { return p.Update(e) }) },
		DeleteFunc: func(e DeleteEvent) bool { return all(ps, func(p Predicate) bool { return p.Delete(e) }) },
	}
}

// Or lets an event through when any predicate does (none when there are
// none). It stops at the first true.
func Or(ps ...Predicate) Predicate {
	return Funcs{
		CreateFunc: func(e CreateEvent) bool { return anyOf(ps, func(p Predicate) bool { return p.Create(e) }) },
		UpdateFunc: func(e UpdateEvent) bool { return anyOf(ps, func(p Predicate) bool { return p.Update(e) }) },
		DeleteFunc: func(e DeleteEvent) bool { return anyOf(ps, func(p Predicate) bool { return p.Delete(e) }) },
	}
}

// Not inverts p for every kind of event.
func Not(p Predicate) Predicate {
	return Funcs{
		CreateFunc: func(e CreateEvent) bool { return !p.Create(e) },
		UpdateFunc: func(e UpdateEvent) bool { return !p.Update(e) },
		DeleteFunc: func(e DeleteEvent) bool { return !p.Delete(e) },
	}
}

func all(ps []Predicate, f func(Predicate) bool) bool {
	for _, p := range ps {
		if !f(p) {
			return false
		}
	}
	return true
}

func anyOf(ps []Predicate, f func(Predicate) bool) bool {
	for _, p := range ps {
		if f(p) {
			return true
		}
	}
	return false
}
