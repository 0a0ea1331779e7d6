package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
)

// ResumeCommand is the command line that resumes a stopped run: words (the command and its
// arguments), the flags given, then --id and --seed (a seed drawn at random is needed to plan
// the run again as it was). Flags set from the environment count as given.
func ResumeCommand(fs *pflag.FlagSet, words []string, id string, seed uint64) string {
	words = append([]string(nil), words...)
	if fs != nil {
		fs.Visit(func(f *pflag.Flag) {
			if f.Name == "id" || f.Name == "seed" {
				return
			}
			values := []string{f.Value.String()}
			if list, ok := f.Value.(pflag.SliceValue); ok {
				values = list.GetSlice()
			}
			for _, v := range values {
				if f.Value.Type() == "bool" && v == "true" {
					words = append(words, "--"+f.Name)
				} else {
					words = append(words, "--"+f.Name, ShellQuote(v))
				}
			}
		})
	}
	return strings.Join(append(words, "--id", ShellQuote(id), "--seed", fmt.Sprint(seed)), " ")
}

// ShellQuote quotes s for a POSIX shell when it holds anything but plain characters.
func ShellQuote(s string) string {
	plain := s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,@%+", r))
	}) < 0
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
