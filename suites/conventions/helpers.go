package conventions

import (
	"strings"

	"github.com/apiconform/apiconform/suites/framework"
)

const area = "conventions"

// bigConfigMap is a configmap whose encoded body exceeds 3 MiB.
func bigConfigMap(name string) map[string]any {
	return framework.ConfigMap(name, map[string]string{"big": strings.Repeat("a", 3*1024*1024+1024)})
}
