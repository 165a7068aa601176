package core

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func secretsResource() *registry.Resource {
	return &registry.Resource{
		Version: "v1", Resource: "secrets", Kind: "Secret", ListKind: "SecretList", Singular: "secret",
		Namespaced:   true,
		NoGeneration: true, // as kube-apiserver: no metadata.generation
		New:          func() runtime.Object { return &corev1.Secret{} },
		NewList:      func() runtime.Object { return &corev1.SecretList{} },
		Strategy: strategy.Typed[*corev1.Secret]{
			Defaults:       defaultSecret,
			ValidateNew:    validateSecret,
			ValidateChange: validateSecretUpdate,
		},
		Attrs: strategy.Attrs(true, func(s *corev1.Secret, set fields.Set) {
			set["type"] = string(s.Type)
		}),
		Table: printers.For("", "Secret"),
	}
}

// defaultSecret defaults the type to Opaque and folds the write-only
// stringData into data (stringData wins), so it is never stored.
func defaultSecret(s *corev1.Secret) {
	if s.Type == "" {
		s.Type = corev1.SecretTypeOpaque
	}
	if len(s.StringData) > 0 && s.Data == nil {
		s.Data = map[string][]byte{}
	}
	for k, v := range s.StringData {
		s.Data[k] = []byte(v)
	}
	s.StringData = nil
}

func validateSecret(s *corev1.Secret) field.ErrorList {
	errs := strategy.ValidateMeta(&s.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
	size := 0
	for _, k := range strategy.SortedKeys(s.Data) {
		errs = append(errs, validateDataKey(dataPath, k)...)
		size += len(s.Data[k])
	}
	if size > corev1.MaxSecretSize {
		errs = append(errs, field.TooLong(dataPath, "", corev1.MaxSecretSize))
	}
	return append(errs, validateSecretType(s)...)
}

// validateSecretType checks the keys the well-known secret types require.
func validateSecretType(s *corev1.Secret) field.ErrorList {
	var errs field.ErrorList
	require := func(keys ...string) {
		for _, k := range keys {
			if _, ok := s.Data[k]; !ok {
				errs = append(errs, field.Required(dataPath.Key(k), ""))
			}
		}
	}
	switch s.Type {
	case corev1.SecretTypeServiceAccountToken:
		if s.Annotations[corev1.ServiceAccountNameKey] == "" {
			errs = append(errs, field.Required(strategy.MetadataPath.Child("annotations").Key(corev1.ServiceAccountNameKey), ""))
		}
	case corev1.SecretTypeDockercfg, corev1.SecretTypeDockerConfigJson:
		key := corev1.DockerConfigKey
		if s.Type == corev1.SecretTypeDockerConfigJson {
			key = corev1.DockerConfigJsonKey
		}
		require(key)
		if v, ok := s.Data[key]; ok {
			if err := json.Unmarshal(v, &map[string]any{}); err != nil {
				errs = append(errs, field.Invalid(dataPath.Key(key), "<secret contents redacted>", err.Error()))
			}
		}
	case corev1.SecretTypeBasicAuth:
		_, user := s.Data[corev1.BasicAuthUsernameKey]
		_, pass := s.Data[corev1.BasicAuthPasswordKey]
		if !user && !pass {
			require(corev1.BasicAuthUsernameKey, corev1.BasicAuthPasswordKey)
		}
	case corev1.SecretTypeSSHAuth:
		if len(s.Data[corev1.SSHAuthPrivateKey]) == 0 {
			errs = append(errs, field.Required(dataPath.Key(corev1.SSHAuthPrivateKey), ""))
		}
	case corev1.SecretTypeTLS:
		require(corev1.TLSCertKey, corev1.TLSPrivateKeyKey)
	}
	return errs
}

// validateSecretUpdate keeps the type fixed and honors immutable: true.
func validateSecretUpdate(s, old *corev1.Secret) field.ErrorList {
	errs := strategy.ValidateMetaUpdate(&s.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, apivalidation.ValidateImmutableField(s.Type, old.Type, field.NewPath("type"))...)
	if strategy.IsTrue(old.Immutable) {
		errs = append(errs, validateImmutableData(s.Immutable, !apiequality.Semantic.DeepEqual(s.Data, old.Data), dataPath)...)
	}
	return append(errs, validateSecret(s)...)
}
