package apiserver

import "github.com/setpoint-dev/setpoint/internal/registry"

// EnvOf returns what the registry's hooks see of s.
func EnvOf(s *Server) registry.Env { return s.env() }
