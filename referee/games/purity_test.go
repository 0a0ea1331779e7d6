package games_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The rules are pure: a match's course depends on its parameters, seed and actions alone. So no
// package of referee/games keeps state of the process: a package-level variable holds nothing
// that synchronises (sync, atomic) and nothing of the rules' code assigns to one after it is
// declared (a cache, a counter, a registry filled at run time). scripts/check-pure-rules.sh
// checks their imports (no transport, clock, logger or global randomness).
func TestRulesKeepNoProcessState(t *testing.T) {
	problems := processState(t, ".")
	for _, p := range problems {
		t.Error(p)
	}
}

// A rules file with a process-wide cache, as ultimatum once had, is caught.
func TestProcessStateIsCaught(t *testing.T) {
	dir := t.TempDir()
	src := `package cached

import "sync/atomic"

var last atomic.Pointer[string]

var seen = map[string]int{}

var count int

func note(s string) {
	last.Store(&s)
	seen[s]++
	count = count + 1
	local := 0
	local++
}

func shadow(count int) int {
	count++
	return count
}
`
	if err := os.WriteFile(filepath.Join(dir, "cached.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(processState(t, dir), "\n")
	for _, want := range []string{"last", "seen", "count = "} {
		if !strings.Contains(got, want) {
			t.Errorf("process state %q not caught; found:\n%s", want, got)
		}
	}
	if strings.Contains(got, "local") || strings.Contains(got, "cached.go:20") {
		t.Errorf("a local variable or a parameter taken for process state:\n%s", got)
	}
}

// processState lists, for every non-test Go file under root, the package-level variables that
// hold synchronised state and the statements that assign to a package-level variable.
func processState(t *testing.T, root string) []string {
	t.Helper()
	byDir := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			byDir[filepath.Dir(path)] = append(byDir[filepath.Dir(path)], path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var problems []string
	fset := token.NewFileSet()
	for _, files := range byDir {
		var parsed []*ast.File
		globals := map[string]bool{}
		for _, path := range files {
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			parsed = append(parsed, f)
			for _, decl := range f.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok || gd.Tok != token.VAR {
					continue
				}
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for _, name := range vs.Names {
						if name.Name != "_" {
							globals[name.Name] = true
						}
					}
					if synchronised(vs) {
						problems = append(problems, fset.Position(vs.Pos()).String()+": package-level "+vs.Names[0].Name+" holds synchronised state")
					}
				}
			}
		}
		for _, f := range parsed {
			for _, decl := range f.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if !ok || fn.Body == nil {
					continue
				}
				problems = append(problems, assignments(fset, fn, globals)...)
			}
		}
	}
	sort.Strings(problems)
	return problems
}

// synchronised reports whether a variable's type or value names package sync or sync/atomic.
func synchronised(vs *ast.ValueSpec) bool {
	found := false
	check := func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && (id.Name == "sync" || id.Name == "atomic") {
				found = true
			}
		}
		return !found
	}
	if vs.Type != nil {
		ast.Inspect(vs.Type, check)
	}
	for _, v := range vs.Values {
		ast.Inspect(v, check)
	}
	return found
}

// assignments lists the statements of fn that assign to a package-level variable: the root of
// the assigned expression (x, x[k], x.f) names a global that fn does not declare itself.
func assignments(fset *token.FileSet, fn *ast.FuncDecl, globals map[string]bool) []string {
	locals := map[string]bool{}
	declare := func(fl *ast.FieldList) {
		if fl == nil {
			return
		}
		for _, field := range fl.List {
			for _, n := range field.Names {
				locals[n.Name] = true
			}
		}
	}
	declare(fn.Recv)
	declare(fn.Type.Params)
	declare(fn.Type.Results)
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			if n.Tok == token.DEFINE {
				for _, l := range n.Lhs {
					if id, ok := l.(*ast.Ident); ok {
						locals[id.Name] = true
					}
				}
			}
		case *ast.ValueSpec:
			for _, id := range n.Names {
				locals[id.Name] = true
			}
		case *ast.FuncLit:
			declare(n.Type.Params)
			declare(n.Type.Results)
		case *ast.RangeStmt:
			if n.Tok == token.DEFINE {
				for _, e := range []ast.Expr{n.Key, n.Value} {
					if id, ok := e.(*ast.Ident); ok {
						locals[id.Name] = true
					}
				}
			}
		}
		return true
	})
	var out []string
	flag := func(target ast.Expr, at token.Pos) {
		root := target
		for {
			switch e := root.(type) {
			case *ast.IndexExpr:
				root = e.X
				continue
			case *ast.SelectorExpr:
				root = e.X
				continue
			case *ast.StarExpr:
				root = e.X
				continue
			case *ast.ParenExpr:
				root = e.X
				continue
			}
			break
		}
		if id, ok := root.(*ast.Ident); ok && globals[id.Name] && !locals[id.Name] {
			out = append(out, fset.Position(at).String()+": "+fn.Name.Name+" assigns to package-level "+id.Name+" = ")
		}
	}
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			if n.Tok != token.DEFINE {
				for _, l := range n.Lhs {
					flag(l, n.Pos())
				}
			}
		case *ast.IncDecStmt:
			flag(n.X, n.Pos())
		}
		return true
	})
	return out
}
