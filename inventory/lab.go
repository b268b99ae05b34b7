package inventory

import "github.com/labctl/labctl/internal/yamlpos"

// Lab is one lab: the single source of truth for which devices exist, how to
// reach them and how they are cabled. A hardware lab points at real management
// addresses; an emulated lab has them filled in by the emulator when it starts.
type Lab struct {
	Name     string `yaml:"name" json:"name"`
	Emulated bool   `yaml:"emulated,omitempty" json:"emulated,omitempty"`
	// KnownHosts is the known_hosts file used to verify every SSH host key.
	KnownHosts  string                `yaml:"known_hosts,omitempty" json:"known_hosts,omitempty"`
	Credentials map[string]Credential `yaml:"credentials,omitempty" json:"credentials,omitempty"`
	Switches    []Switch              `yaml:"switches" json:"switches"`
	Hosts       []Host                `yaml:"hosts" json:"hosts"`
	Links       []Link                `yaml:"links" json:"links"`
	Services    Services              `yaml:"services,omitempty" json:"services,omitempty"`
	// GNMITLS is how collectors reach the switches' gNMI servers (gnmitls.go).
	GNMITLS *GNMITLS `yaml:"gnmi_tls,omitempty" json:"gnmi_tls,omitempty"`
	// Emulation is an emulated lab's twin: engine and modules (emulation.go).
	Emulation *Emulation `yaml:"emulation,omitempty" json:"emulation,omitempty"`

	// File is the path the lab was loaded from ("" for generated labs).
	File string `yaml:"-" json:"file,omitempty"`
	// Generator is the topology spec a generated lab came from, e.g. "leafspine:2x4:4@100".
	Generator string `yaml:"-" json:"generator,omitempty"`

	pos *yamlpos.Index // field path -> line, for validation messages
}

// Credential says how to authenticate, always by reference: a key file, the
// ssh-agent, or a password held in an environment variable or a file. A lab
// file never holds a secret itself.
type Credential struct {
	User         string `yaml:"user" json:"user"`
	KeyFile      string `yaml:"key_file,omitempty" json:"key_file,omitempty"`
	Agent        bool   `yaml:"agent,omitempty" json:"agent,omitempty"`
	PasswordEnv  string `yaml:"password_env,omitempty" json:"password_env,omitempty"`
	PasswordFile string `yaml:"password_file,omitempty" json:"password_file,omitempty"`
}

// Mgmt holds management endpoints as host:port.
type Mgmt struct {
	SSH     string `yaml:"ssh,omitempty" json:"ssh,omitempty"`
	NETCONF string `yaml:"netconf,omitempty" json:"netconf,omitempty"`
	GNMI    string `yaml:"gnmi,omitempty" json:"gnmi,omitempty"`
}

// Switch is a leaf or spine.
type Switch struct {
	Name  string `yaml:"name" json:"name"`
	Role  string `yaml:"role" json:"role"` // leaf | spine
	Model string `yaml:"model,omitempty" json:"model,omitempty"`
	// OS is the switch's network operating system (sonic, eos, bf-sde,
	// ...): with Model it picks the QoS driver (drivers/qosdriver).
	OS         string `yaml:"os,omitempty" json:"os,omitempty"`
	Mgmt       Mgmt   `yaml:"mgmt" json:"mgmt"`
	Credential string `yaml:"credential,omitempty" json:"credential,omitempty"`
	// QoSDriver names the QoS driver explicitly (netconf, sde, sonic,
	// openconfig); empty: the one OS or Model picks, else netconf.
	QoSDriver string `yaml:"qos_driver,omitempty" json:"qos_driver,omitempty"`
	// GNMITLS overrides the lab's gnmi_tls for this switch (gnmitls.go).
	GNMITLS *GNMITLS `yaml:"gnmi_tls,omitempty" json:"gnmi_tls,omitempty"`
	Ports   []Port   `yaml:"ports" json:"ports"`
}

// Port is a front-panel port.
type Port struct {
	Name      string  `yaml:"name" json:"name"`
	SpeedGbps float64 `yaml:"speed_gbps,omitempty" json:"speed_gbps,omitempty"`
}

// Host is a server with one or more RNICs.
type Host struct {
	Name       string `yaml:"name" json:"name"`
	Mgmt       Mgmt   `yaml:"mgmt" json:"mgmt"`
	Credential string `yaml:"credential,omitempty" json:"credential,omitempty"`
	RNICs      []RNIC `yaml:"rnics" json:"rnics"`
}

// RNIC is one RDMA NIC port.
type RNIC struct {
	Device    string  `yaml:"device" json:"device"` // mlx5_0
	Netdev    string  `yaml:"netdev" json:"netdev"` // ens1f0
	GIDIndex  int     `yaml:"gid_index" json:"gid_index"`
	SpeedGbps float64 `yaml:"speed_gbps" json:"speed_gbps"`
	// IP is the RoCE address other hosts use to reach this RNIC.
	IP string `yaml:"ip" json:"ip"`
}

// Link is a cable between two device ports. On a host, the port is the RNIC
// device name (mlx5_0) or its netdev.
type Link struct {
	A LinkEnd `yaml:"a" json:"a"`
	B LinkEnd `yaml:"b" json:"b"`
	// DelayNs is the one-way propagation delay; used by the fabric twin.
	DelayNs int64 `yaml:"delay_ns,omitempty" json:"delay_ns,omitempty"`
}

// LinkEnd is "device:port".
type LinkEnd struct {
	Device string `json:"device"`
	Port   string `json:"port"`
}

func (e LinkEnd) String() string { return e.Device + ":" + e.Port }

// Services are lab-wide services.
type Services struct {
	InfluxDB *InfluxDB `yaml:"influxdb,omitempty" json:"influxdb,omitempty"`
}

// InfluxDB is where telemetry is written. The token is a reference.
type InfluxDB struct {
	URL       string `yaml:"url" json:"url"`
	Org       string `yaml:"org,omitempty" json:"org,omitempty"`
	Bucket    string `yaml:"bucket" json:"bucket"`
	TokenEnv  string `yaml:"token_env,omitempty" json:"token_env,omitempty"`
	TokenFile string `yaml:"token_file,omitempty" json:"token_file,omitempty"`
}
