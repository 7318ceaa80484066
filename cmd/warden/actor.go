package main

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"strings"
)

// actorEnv names the actor of warden's commands when set: the name approvers know the
// person by (the approval rules list it), where the OS account name differs or is shared.
const actorEnv = "WARDEN_ACTOR"

// actor is who runs this command, as every event they cause records it: $WARDEN_ACTOR,
// or else the OS user name.
func actor() (string, error) {
	if a := strings.TrimSpace(os.Getenv(actorEnv)); a != "" {
		return a, nil
	}
	u, err := user.Current()
	if err != nil {
		return "", fmt.Errorf("who is acting: set %s (the OS user is unknown: %w)", actorEnv, err)
	}
	if strings.TrimSpace(u.Username) == "" {
		return "", errors.New("who is acting: set " + actorEnv + " (the OS user has no name)")
	}
	return u.Username, nil
}
