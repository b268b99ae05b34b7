package inventory

// Emulation is what an emulated lab's fabric twin runs unless a
// scenario's emulation: section or a command's flag says otherwise: its
// engine, the switches' load-balancing module and the RNICs' host module
// with their parameters. The names are the twin's registries'
// (emulator/fabric, .../lb/schemes, .../hostlb/hostschemes).
type Emulation struct {
	Engine       string            `yaml:"engine,omitempty" json:"engine,omitempty"`
	LB           string            `yaml:"lb,omitempty" json:"lb,omitempty"`
	LBParams     map[string]string `yaml:"lb_params,omitempty" json:"lb_params,omitempty"`
	HostLB       string            `yaml:"host_lb,omitempty" json:"host_lb,omitempty"`
	HostLBParams map[string]string `yaml:"host_lb_params,omitempty" json:"host_lb_params,omitempty"`
}

// Registries are what validation asks about the names a lab file uses;
// the CLI passes the same registries the emulator and provision build
// from. A nil field is not asked (the names it would check pass).
type Registries struct {
	QoSDrivers QoSDrivers
	// Engines checks an engine's name: whether it simulates packets (and
	// so runs lb and host_lb modules), or an error naming the known ones.
	Engines func(name string) (packets bool, err error)
	// LB and HostLB check a module's name and parameters: one problem
	// per bad parameter, Param "" for the name.
	LB, HostLB func(name string, params map[string]string) []ParamProblem
}

// ParamProblem is one problem a module registry finds.
type ParamProblem struct {
	Param string // "" for the module's name
	Msg   string
}

// ValidateAgainst is Validate that also checks every name the lab gives
// (QoS drivers, the emulation's engine and modules) against r.
func (l *Lab) ValidateAgainst(r Registries) error { return l.validate(r) }

// ResolveAgainst is Resolve validating the names against r.
func ResolveAgainst(nameOrPath string, r Registries) (*Lab, error) {
	if IsGeneratorSpec(nameOrPath) {
		return Generate(nameOrPath)
	}
	lab, err := Load(nameOrPath)
	if err != nil {
		return nil, err
	}
	if err := lab.ValidateAgainst(r); err != nil {
		return nil, err
	}
	return lab, nil
}

// validateEmulation checks the emulation section: only an emulated lab
// has a twin, and each name is one its registry knows.
func (l *Lab) validateEmulation(r Registries, add func(path, format string, args ...any)) {
	em := l.Emulation
	if em == nil {
		return
	}
	if !l.Emulated {
		add("emulation", "only an emulated lab (emulated: true) has a fabric twin to configure")
		return
	}
	packets := true
	if em.Engine != "" && r.Engines != nil {
		var err error
		if packets, err = r.Engines(em.Engine); err != nil {
			add("emulation.engine", "%v", err)
			packets = true // one problem about the engine is enough
		}
	}
	for _, m := range []struct {
		field, name string
		params      map[string]string
		check       func(string, map[string]string) []ParamProblem
	}{
		{"lb", em.LB, em.LBParams, r.LB},
		{"host_lb", em.HostLB, em.HostLBParams, r.HostLB},
	} {
		switch {
		case m.name == "" && len(m.params) > 0:
			add("emulation."+m.field+"_params", "parameters without %s: name the module they are for", m.field)
		case m.name == "":
		case !packets:
			add("emulation."+m.field, "%s %s needs an engine that simulates packets (engine %s does not)", m.field, m.name, em.Engine)
		case m.check != nil:
			for _, p := range m.check(m.name, m.params) {
				if p.Param == "" {
					add("emulation."+m.field, "%s", p.Msg)
				} else {
					add("emulation."+m.field+"_params."+p.Param, "%s", p.Msg)
				}
			}
		}
	}
}
