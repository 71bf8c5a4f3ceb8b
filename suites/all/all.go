// Package all imports every apiconform suite so that their specs register
// with Ginkgo. Import it (blank) before calling runner.Run.
package all

import (
	_ "github.com/apiconform/apiconform/suites/apply"
	_ "github.com/apiconform/apiconform/suites/clients"
	_ "github.com/apiconform/apiconform/suites/compatibility"
	_ "github.com/apiconform/apiconform/suites/conventions"
	_ "github.com/apiconform/apiconform/suites/deletion"
	_ "github.com/apiconform/apiconform/suites/dryrun"
	_ "github.com/apiconform/apiconform/suites/fieldvalidation"
	_ "github.com/apiconform/apiconform/suites/paging"
	_ "github.com/apiconform/apiconform/suites/resources"
	_ "github.com/apiconform/apiconform/suites/resourceversion"
	_ "github.com/apiconform/apiconform/suites/watch"
)
