package gamefile

import (
	"fmt"
	"math"
	"math/big"
	"strings"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
)

// MaxMagnitude bounds the numerator and denominator of every payoff, scale and scaled payoff,
// so that each fits the contract's int64 Rational and converts exactly to the float64 payoffs
// of a match outcome when it is whole.
const MaxMagnitude int64 = 1 << 53

// ParseRational reads an exact number written as a whole number ("-4"), a decimal ("2.5") or
// a fraction ("5/2", "-1/3").
func ParseRational(s string) (*big.Rat, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return nil, fmt.Errorf("an empty number")
	}
	if strings.ContainsAny(t, "eE") || strings.HasPrefix(t, "+") || strings.Count(t, "/") > 1 {
		return nil, fmt.Errorf("%q is not a number; write a whole number, a decimal or a fraction like 5/2", s)
	}
	if num, den, ok := strings.Cut(t, "/"); ok && (strings.Contains(num, ".") || strings.Contains(den, ".") || strings.HasPrefix(den, "-")) {
		return nil, fmt.Errorf("%q is not a fraction of whole numbers with a positive denominator", s)
	}
	r, ok := new(big.Rat).SetString(t)
	if !ok {
		return nil, fmt.Errorf("%q is not a number; write a whole number, a decimal or a fraction like 5/2", s)
	}
	if err := checkMagnitude(r); err != nil {
		return nil, fmt.Errorf("%q: %w", s, err)
	}
	return r, nil
}

func checkMagnitude(r *big.Rat) error {
	limit := big.NewInt(MaxMagnitude)
	if new(big.Int).Abs(r.Num()).Cmp(limit) > 0 || r.Denom().Cmp(limit) > 0 {
		return fmt.Errorf("%s is too large: numerator and denominator must be at most 2^53", r.RatString())
	}
	return nil
}

// RatProto writes r as a contract Rational (lowest terms, den >= 1). r must be within
// MaxMagnitude.
func RatProto(r *big.Rat) *gamev1.Rational {
	return &gamev1.Rational{Num: r.Num().Int64(), Den: r.Denom().Int64()}
}

// RatOf reads a contract Rational; den 0 is read as 1. It refuses a negative denominator and
// magnitudes beyond MaxMagnitude.
func RatOf(q *gamev1.Rational) (*big.Rat, error) {
	if q == nil {
		return nil, fmt.Errorf("a missing number")
	}
	den := q.GetDen()
	switch {
	case den == 0:
		den = 1
	case den < 0:
		return nil, fmt.Errorf("%d/%d has a negative denominator", q.GetNum(), q.GetDen())
	}
	if q.GetNum() == math.MinInt64 {
		return nil, fmt.Errorf("%d/%d is too large", q.GetNum(), q.GetDen())
	}
	r := new(big.Rat).SetFrac64(q.GetNum(), den)
	if err := checkMagnitude(r); err != nil {
		return nil, err
	}
	return r, nil
}

// RatFloat returns r as the nearest float64.
func RatFloat(r *big.Rat) float64 {
	f, _ := r.Float64()
	return f
}
