package dra

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// BenchmarkSelector measures checking one device selector (the environment
// is built once, on first use).
func BenchmarkSelector(b *testing.B) {
	c := &selectorCompiler{}
	p := field.NewPath("x")
	expr := "device.driver == 'gpu.example.com' && device.attributes['gpu.example.com'].model == 'a100'"
	for b.Loop() {
		if errs := c.validate(p, expr); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}

// BenchmarkSelectorEnvironment measures building the environment.
func BenchmarkSelectorEnvironment(b *testing.B) {
	for b.Loop() {
		c := &selectorCompiler{}
		c.init()
		if c.err != nil {
			b.Fatal(c.err)
		}
	}
}
