package llm

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Cache keeps model replies in files named by the SHA-256 of everything that determines a
// reply (see CacheKey), so that re-running a recorded match replays it without calling the
// model, and a prompt repeated across a sweep is paid for once. Entries are written atomically
// (a temporary file renamed into place), so several processes may share one directory.
type Cache struct {
	dir string
}

// DefaultCacheDir is the cache's default directory: parley/llm under the user's cache
// directory (os.UserCacheDir, e.g. ~/.cache/parley/llm on Linux).
func DefaultCacheDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("llm: no user cache directory: %w", err)
	}
	return filepath.Join(base, "parley", "llm"), nil
}

// OpenCache returns the cache in dir, creating the directory if needed.
func OpenCache(dir string) (*Cache, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("llm: cache: %w", err)
	}
	return &Cache{dir: dir}, nil
}

// Dir is the cache's directory.
func (c *Cache) Dir() string { return c.dir }

// CacheKey is what a cached reply is filed under: the model, every message sent (roles and
// texts, corrections included), the sampling parameters, the output style and, with cache
// scope "match" (the default), the scheduled match (a rerun's id without its -r<k>), or with
// scope "global" the endpoint. Its Hash names the entry.
type CacheKey struct {
	// Version changes when the key's meaning does.
	Version int `json:"v"`
	// Endpoint is the API's base URL with scope "global": one model name on two servers is
	// two models there. Empty with scope "match" (see Agent.cacheKey).
	Endpoint string       `json:"endpoint"`
	Model    string       `json:"model"`
	Messages []KeyMessage `json:"messages"`
	// Temperature and Seed are nil when not sent (the server's default).
	Temperature *float64 `json:"temperature"`
	MaxTokens   int      `json:"max_tokens"`
	Seed        *int     `json:"seed"`
	// Style is the output style; the structured-output mode is left out on purpose (a reply to
	// the same prompt in the same style is the same answer, however the server was asked to
	// keep to the format).
	Style string `json:"style"`
	// Match is the scheduled match's id with cache scope "match", else empty.
	Match string `json:"match,omitempty"`
}

// KeyMessage is one chat message of a CacheKey.
type KeyMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Hash is the hex SHA-256 of the key's canonical JSON.
func (k CacheKey) Hash() string {
	b, err := json.Marshal(k)
	if err != nil {
		panic(err) // plain data always marshals
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// cacheEntry is one stored reply.
type cacheEntry struct {
	Model            string `json:"model"`
	Content          string `json:"content"`
	PromptTokens     int64  `json:"prompt_tokens"`
	CompletionTokens int64  `json:"completion_tokens"`
}

func (c *Cache) path(hash string) string { return filepath.Join(c.dir, hash[:2], hash+".json") }

// get returns the entry filed under hash, if any. An unreadable entry is a miss.
func (c *Cache) get(hash string) (cacheEntry, bool) {
	b, err := os.ReadFile(c.path(hash))
	if err != nil {
		return cacheEntry{}, false
	}
	var e cacheEntry
	if err := json.Unmarshal(b, &e); err != nil {
		return cacheEntry{}, false
	}
	return e, true
}

// put files e under hash.
func (c *Cache) put(hash string, e cacheEntry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	p := c.path(hash)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("llm: cache: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".put-*")
	if err != nil {
		return fmt.Errorf("llm: cache: %w", err)
	}
	_, werr := f.Write(b)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("llm: cache: %w", err)
	}
	if err := os.Rename(f.Name(), p); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("llm: cache: %w", err)
	}
	return nil
}

// Len counts the entries (for tests and tools).
func (c *Cache) Len() (int, error) {
	n := 0
	err := filepath.WalkDir(c.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && filepath.Ext(p) == ".json" {
			n++
		}
		return nil
	})
	return n, err
}
