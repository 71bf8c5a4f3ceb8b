package refserver

import "github.com/apiconform/apiconform/refserver/auth"

type authUser = auth.User
