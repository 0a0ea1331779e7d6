package equilibria

// Elimination is one step of iterated elimination of strictly dominated actions: Player's
// Action is strictly worse than By against every profile of the others' remaining actions.
type Elimination struct {
	Player, Action, By int
}

// Dominance is what comparing actions pure strategy against pure strategy finds.
type Dominance struct {
	// Steps are the eliminations of iterated elimination of strictly dominated actions, in
	// order (each player's lowest-numbered dominated action first, players in seat order,
	// until none is left); the order does not change what survives.
	Steps []Elimination
	// Remaining[p] are player p's actions that survive, ascending.
	Remaining [][]int
	// Weak[p] are player p's actions weakly dominated in the whole game by another single
	// action: never better against any profile of the others', worse against one (e.g. split
	// in golden balls). Strictly dominated actions are among them.
	Weak [][]int
}

// Dominated compares actions in m. Domination by mixed strategies is not looked for.
func Dominated(m *Matrix) Dominance {
	n := m.Players()
	alive := make([][]bool, n)
	for p := range n {
		alive[p] = make([]bool, m.sizes[p])
		for a := range alive[p] {
			alive[p][a] = true
		}
	}
	var d Dominance
	for changed := true; changed; {
		changed = false
		for p := range n {
			for a := range m.sizes[p] {
				if !alive[p][a] {
					continue
				}
				for b := range m.sizes[p] {
					if b == a || !alive[p][b] {
						continue
					}
					if ok, _ := m.compare(p, a, b, alive); ok {
						alive[p][a] = false
						d.Steps = append(d.Steps, Elimination{Player: p, Action: a, By: b})
						changed = true
						break
					}
				}
			}
		}
	}
	d.Remaining = make([][]int, n)
	d.Weak = make([][]int, n)
	all := make([][]bool, n)
	for p := range n {
		all[p] = make([]bool, m.sizes[p])
		for a := range all[p] {
			all[p][a] = true
			if alive[p][a] {
				d.Remaining[p] = append(d.Remaining[p], a)
			}
		}
	}
	for p := range n {
		for a := range m.sizes[p] {
			for b := range m.sizes[p] {
				if b == a {
					continue
				}
				if _, weak := m.compare(p, a, b, all); weak {
					d.Weak[p] = append(d.Weak[p], a)
					break
				}
			}
		}
	}
	return d
}

// compare reports whether player's action b beats a against every profile of the others'
// alive actions (strict) and whether b is never worse and once better (weak).
func (m *Matrix) compare(player, a, b int, alive [][]bool) (strict, weak bool) {
	strict, never, better := true, true, false
	for k, pay := range m.pay {
		if k/m.strides[player]%m.sizes[player] != a {
			continue
		}
		skip := false
		for q := range m.sizes {
			if q != player && !alive[q][k/m.strides[q]%m.sizes[q]] {
				skip = true
				break
			}
		}
		if skip {
			continue
		}
		c := m.pay[k+(b-a)*m.strides[player]][player].Cmp(pay[player])
		if c <= 0 {
			strict = false
		}
		if c < 0 {
			never = false
		}
		if c > 0 {
			better = true
		}
	}
	return strict, never && better
}
