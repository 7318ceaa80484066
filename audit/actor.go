package audit

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"strings"
)

// ActorEnv names the actor of warden's commands when set: the name approvers know the
// person by (the approval rules list it), where the OS account name differs or is shared.
const ActorEnv = "WARDEN_ACTOR"

// CurrentActor is who runs this command, as every event they cause records it (Event's
// Actor): $WARDEN_ACTOR, or else the OS user name.
func CurrentActor() (string, error) {
	if a := strings.TrimSpace(os.Getenv(ActorEnv)); a != "" {
		return a, nil
	}
	u, err := user.Current()
	if err != nil {
		return "", fmt.Errorf("who is acting: set %s (the OS user is unknown: %w)", ActorEnv, err)
	}
	if strings.TrimSpace(u.Username) == "" {
		return "", errors.New("who is acting: set " + ActorEnv + " (the OS user has no name)")
	}
	return u.Username, nil
}
