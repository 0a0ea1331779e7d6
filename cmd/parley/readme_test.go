package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeCommandsNamePathsThatExist reads the shell examples of the READMEs and the agent
// guide, as a person on a fresh clone would copy them, and checks that every path of the
// repository they name exists and that no command holds a bare "..." for the reader to fill
// in: a command runs from a clone as printed.
func TestReadmeCommandsNamePathsThatExist(t *testing.T) {
	root := repoRoot(t)
	docs, err := filepath.Glob(filepath.Join(root, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, pattern := range []string{"*/*/README.md", "*/README.md", "docs/*.md"} {
		more, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, more...)
	}
	// Top-level entries of the repository: a path in a command is one of theirs.
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	top := map[string]bool{}
	for _, e := range entries {
		top[e.Name()] = true
	}
	block := regexp.MustCompile("(?s)```(?:sh|bash|console)\n(.*?)```")
	checked := 0
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, doc)
		for _, m := range block.FindAllStringSubmatch(string(b), -1) {
			for _, cmd := range commands(m[1]) {
				for _, word := range strings.Fields(cmd) {
					word = strings.Trim(word, `'"();|`)
					if word == "..." {
						t.Errorf("%s: a command holds a bare ...: %s", rel, cmd)
					}
					key, path, _ := strings.Cut(word, "=")
					if path == "" {
						path = key
					}
					path = strings.TrimPrefix(path, "./")
					if strings.HasPrefix(path, "../") {
						t.Errorf("%s: %s names %s, outside the repository", rel, firstWords(cmd), path)
						continue
					}
					if (key == "file" || key == "corpus") && !strings.Contains(path, "/") {
						path = "./" + path // a file of the parameter, given without a folder
					}
					first, _, nested := strings.Cut(path, "/")
					if !nested || !top[first] && first != "." || strings.ContainsAny(path, "$*<>{}") || built(path) {
						continue
					}
					checked++
					if _, err := os.Stat(filepath.Join(root, path)); err != nil {
						t.Errorf("%s: %s names %s, which the repository does not hold", rel, firstWords(cmd), path)
					}
				}
			}
		}
	}
	if checked < 20 {
		t.Errorf("checked %d paths in the READMEs' commands: the examples were not found", checked)
	}
}

// built says whether path lies in what a build makes (bin/, dist/, gen/ below the top level,
// node_modules/): an earlier command of the example makes it.
func built(path string) bool {
	parts := strings.Split(path, "/")
	if parts[0] == "bin" {
		return true
	}
	for _, p := range parts[1:] {
		if p == "dist" || p == "gen" || p == "node_modules" {
			return true
		}
	}
	return false
}

// commands splits a shell block into commands: continuation lines joined, comments dropped.
func commands(block string) []string {
	var out []string
	cur := ""
	for _, line := range strings.Split(block, "\n") {
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		cur += " " + strings.TrimSpace(strings.TrimSuffix(strings.TrimRight(line, " "), "\\"))
		if !strings.HasSuffix(strings.TrimRight(line, " "), "\\") {
			if strings.TrimSpace(cur) != "" {
				out = append(out, strings.TrimSpace(cur))
			}
			cur = ""
		}
	}
	return out
}

// firstWords is the start of a command, to name it in a failure.
func firstWords(cmd string) string {
	w := strings.Fields(cmd)
	if len(w) > 5 {
		w = append(w[:5], "…")
	}
	return strings.Join(w, " ")
}
