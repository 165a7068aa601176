package compat

import (
	"net/url"
	"testing"

	"github.com/setpoint-dev/setpoint/compat/internal/difftest"
)

const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io"

// TestTables compares, for every listable resource setpoint serves, the
// Table a `kubectl get` receives: column definitions (name, type, format,
// priority; descriptions are setpoint's own) and, for the resource's
// sample created on both servers, the row's cells and object.
func TestTables(t *testing.T) {
	rep := difftest.NewReport(t, env.allow, "tables", env.sink)
	defer rep.Finish()
	samples, created := createSamples(t)
	for _, r := range refResources("list") {
		if !served(r.ID()) {
			continue
		}
		n := normFor(r.ID())
		sample := sampleFor(samples, r)
		if sample == nil {
			req := difftest.Request{Path: r.Path("") + "?limit=1", Header: map[string]string{"Accept": tableAccept}}
			compareAnswers(t, rep, r.ID()+"/table", req, n, keepColumns)
			continue
		}
		name, _ := difftest.Get(sample, "metadata.name").(string)
		if p, ok := created[r.ID()+"/"+name]; ok {
			rep.Compare(r.ID()+"/sample-create", map[string]any{"code": difftest.Number(p.Ref.Code)},
				map[string]any{"code": difftest.Number(p.SP.Code)})
		}
		q := "?fieldSelector=" + url.QueryEscape("metadata.name="+name)
		req := difftest.Request{Path: r.Path(samplesNamespace) + q, Header: map[string]string{"Accept": tableAccept}}
		compareAnswers(t, rep, r.ID()+"/table", req, n, shapeTable)
		wide := req
		wide.Path = r.Path(samplesNamespace) + "/" + url.PathEscape(name)
		compareAnswers(t, rep, r.ID()+"/table-get", wide, n, shapeTable)
	}
}

// shapeTable drops the column descriptions (setpoint writes its own) and
// masks the cells of an Age column that is a string (a duration the
// server renders at its own moment).
func shapeTable(_ string, a map[string]any) {
	cols, _ := difftest.Get(a, "body.columnDefinitions").([]any)
	age := -1
	for i, c := range cols {
		if m, ok := c.(map[string]any); ok {
			delete(m, "description")
			if m["name"] == "Age" && m["type"] == "string" {
				age = i
			}
		}
	}
	rows, _ := difftest.Get(a, "body.rows").([]any)
	for _, r := range rows {
		cells, _ := difftest.Get(r, "cells").([]any)
		if age >= 0 && age < len(cells) {
			cells[age] = "<age>"
		}
	}
}

// keepColumns compares a Table's columns only (the rows are whatever
// objects each server holds).
func keepColumns(side string, a map[string]any) {
	shapeTable(side, a)
	if body, ok := a["body"].(map[string]any); ok {
		delete(body, "rows")
		delete(body, "metadata")
	}
}
