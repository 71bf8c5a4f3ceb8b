package render

import (
	"encoding/json"
	"io"

	"github.com/apiconform/apiconform/reports"
	"github.com/apiconform/apiconform/reports/result"
)

// WriteJSON writes the result itself for one result, or the matrix
// (schema apiconform.io/matrix/v1) when several are compared.
func WriteJSON(w io.Writer, rep *reports.Report) error {
	if len(rep.Results) == 1 {
		return result.Write(w, rep.Results[0])
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(rep)
}
