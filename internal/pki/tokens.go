package pki

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// User is an authenticated identity.
type User struct {
	Name   string
	UID    string
	Groups []string
}

// Tokens maps static bearer tokens to users. It is immutable after load.
type Tokens struct {
	entries []tokenEntry
}

type tokenEntry struct {
	token string
	user  User
}

// AdminUser is the identity of the generated admin token.
var adminUser = User{Name: "setpoint-admin", UID: "setpoint-admin", Groups: []string{"system:masters", "system:authenticated"}}

// EnsureTokens loads dir/tokens.csv, creating it with one admin token on
// first use. It returns the tokens and the admin token.
func EnsureTokens(dir string) (*Tokens, string, error) {
	path := filepath.Join(dir, "tokens.csv")
	t, err := loadTokens(path)
	if errors.Is(err, os.ErrNotExist) {
		buf := make([]byte, 32)
		if _, err := rand.Read(buf); err != nil {
			return nil, "", fmt.Errorf("generate token: %w", err)
		}
		tok := hex.EncodeToString(buf)
		line := fmt.Sprintf("%s,%s,%s,\"%s\"\n", tok, adminUser.Name, adminUser.UID, strings.Join(adminUser.Groups, ","))
		if err := writeFileAtomic(path, []byte(line), 0o600); err != nil {
			return nil, "", err
		}
		t, err = loadTokens(path)
	}
	if err != nil {
		return nil, "", fmt.Errorf("load tokens: %w", err)
	}
	for _, e := range t.entries {
		if e.user.Name == adminUser.Name {
			return t, e.token, nil
		}
	}
	return nil, "", fmt.Errorf("%s has no %s token", path, adminUser.Name)
}

func loadTokens(path string) (*Tokens, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	t := &Tokens{}
	for i, rec := range recs {
		if len(rec) < 3 || rec[0] == "" {
			return nil, fmt.Errorf("%s line %d: want token,user,uid[,groups]", path, i+1)
		}
		u := User{Name: rec[1], UID: rec[2]}
		if len(rec) > 3 && rec[3] != "" {
			u.Groups = strings.Split(rec[3], ",")
		}
		t.entries = append(t.entries, tokenEntry{token: rec[0], user: u})
	}
	return t, nil
}

// Lookup returns the user of token, comparing in constant time per entry.
func (t *Tokens) Lookup(token string) (User, bool) {
	for _, e := range t.entries {
		if subtle.ConstantTimeCompare([]byte(e.token), []byte(token)) == 1 {
			return e.user, true
		}
	}
	return User{}, false
}
