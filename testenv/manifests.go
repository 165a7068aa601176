package testenv

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// readWebhookManifests reads the webhook configurations of paths (files,
// or directories of *.yaml, *.yml and *.json files), in order.
func readWebhookManifests(paths []string) (mutating []*admissionregistrationv1.MutatingWebhookConfiguration,
	validating []*admissionregistrationv1.ValidatingWebhookConfiguration, err error) {
	files, err := manifestFiles(paths)
	if err != nil {
		return nil, nil, err
	}
	for _, f := range files {
		docs, err := readDocuments(f)
		if err != nil {
			return nil, nil, err
		}
		for i, doc := range docs {
			var tm metav1.TypeMeta
			if err := yaml.Unmarshal(doc, &tm); err != nil {
				return nil, nil, fmt.Errorf("testenv: %s, document %d: %w", f, i+1, err)
			}
			if tm.APIVersion != admissionregistrationv1.SchemeGroupVersion.String() {
				continue
			}
			switch tm.Kind {
			case "MutatingWebhookConfiguration":
				c := &admissionregistrationv1.MutatingWebhookConfiguration{}
				if err := yaml.UnmarshalStrict(doc, c); err != nil {
					return nil, nil, fmt.Errorf("testenv: %s, document %d: %w", f, i+1, err)
				}
				mutating = append(mutating, c)
			case "ValidatingWebhookConfiguration":
				c := &admissionregistrationv1.ValidatingWebhookConfiguration{}
				if err := yaml.UnmarshalStrict(doc, c); err != nil {
					return nil, nil, fmt.Errorf("testenv: %s, document %d: %w", f, i+1, err)
				}
				validating = append(validating, c)
			}
		}
	}
	return mutating, validating, nil
}

// manifestFiles expands directories into their manifest files (sorted by
// name); files named directly are read whatever their extension.
func manifestFiles(paths []string) ([]string, error) {
	var files []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("testenv: webhook manifests: %w", err)
		}
		if !fi.IsDir() {
			files = append(files, p)
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return nil, fmt.Errorf("testenv: webhook manifests: %w", err)
		}
		for _, e := range entries {
			if !e.IsDir() && slices.Contains([]string{".yaml", ".yml", ".json"}, strings.ToLower(filepath.Ext(e.Name()))) {
				files = append(files, filepath.Join(p, e.Name()))
			}
		}
	}
	return files, nil
}

// readDocuments splits a YAML stream (or a JSON document) into its
// non-empty documents.
func readDocuments(path string) ([][]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("testenv: webhook manifests: %w", err)
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("testenv: %s: %w", path, err)
		}
		if len(bytes.TrimSpace(doc)) > 0 {
			docs = append(docs, doc)
		}
	}
}
