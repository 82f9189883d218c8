//! The arguments of `clone create` and `clone configure`: where a clone points, and its
//! load shape.

use clap::Args;

/// Create a clone (and with --start, start it).
#[derive(Debug, Args)]
// On the arguments, not the verb: a `clone create-many` line is parsed with them alone
// and says what `clone create` says.
#[command(after_help = crate::cli::examples::CLONE_CREATE)]
pub struct CloneCreateArgs {
    pub name: String,
    #[arg(long)]
    pub base: String,
    /// The Puppet Server the agent runs against; required except with --run-mode apply.
    /// `--master`, the older word, is taken too.
    #[arg(long, alias = "master")]
    pub server: Option<String>,
    /// The port of --server [default: Puppet's, 8140].
    #[arg(long, value_name = "PORT", value_parser = server_port_parser())]
    pub server_port: Option<u16>,
    #[arg(long)]
    pub certname: String,
    #[arg(long)]
    pub start: bool,
    #[command(flatten)]
    pub shape: ShapeArgs,
    /// File holding root's crypt(3) password hash ($id$...), for `machinectl login`.
    #[arg(long, value_name = "PATH")]
    pub root_password_hash_file: Option<std::path::PathBuf>,
    /// File holding the CSR challenge password for policy-based autosigning.
    #[arg(long, value_name = "PATH")]
    pub challenge_password_file: Option<std::path::PathBuf>,
    /// One real node's record (PuppetDB inventory or factset, puppet facts): the clone
    /// becomes its twin, with the node's facts, environment and trusted extensions, never
    /// its certname; refused unless the node's os.family is the base's.
    #[arg(long, value_name = "PATH")]
    pub twin_file: Option<std::path::PathBuf>,
    /// A trusted extension the clone's certificate request asks for, as NAME=VALUE
    /// (pp_role=web; a registered name or a private OID 1.3.6.1.4.1.34380.1.2.N), so that
    /// classification by $trusted['extensions'] works; repeatable; not with --twin-file.
    #[arg(long = "extension", value_name = "NAME=VALUE")]
    pub extensions: Vec<String>,
}

#[derive(Debug, Args)]
pub struct CloneConfigureArgs {
    pub name: String,
    /// The Puppet Server the agent runs against (`--master` is taken too).
    #[arg(long, alias = "master")]
    pub server: Option<String>,
    /// The port of the server the agent runs against.
    #[arg(long, value_name = "PORT", value_parser = server_port_parser())]
    pub server_port: Option<u16>,
    #[arg(long)]
    pub certname: Option<String>,
    /// One real node's record: the clone becomes its twin (facts, environment, twin record and
    /// extension requests rewritten); its extensions reach its certificate only when its
    /// certname has none yet, so give a new --certname with a new node.
    #[arg(long, value_name = "PATH")]
    pub twin_file: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub shape: ShapeArgs,
}

/// Run mode, limits and facts (docs/PROTOCOL.md, "Load shape"). On `create` an absent flag
/// means its default; on `configure` it leaves that setting as it is.
#[derive(Debug, Args)]
pub struct ShapeArgs {
    /// When the agent runs: the puppet.service daemon, a systemd timer of one-shot runs, never by itself, or a timer of masterless `puppet apply` runs [default on create: daemon].
    #[arg(long, value_enum, value_name = "MODE")]
    pub run_mode: Option<crate::clone::run_mode::RunMode>,
    /// Seconds between agent runs, 60 to 604800 [default on create: 1800].
    #[arg(long, value_name = "SECONDS")]
    pub runinterval: Option<u64>,
    /// Random delay of up to this many seconds before each run [default on create: 0].
    #[arg(long, value_name = "SECONDS")]
    pub splay: Option<u64>,
    /// This clone's phase, 0 to N-1: its place in the fleet, which --phasing turns into the offset of its runs in each interval (with --phase-count).
    #[arg(long, value_name = "I", requires = "phase_count")]
    pub phase_index: Option<u32>,
    /// The number of phases (clones) in the fleet (with --phase-index).
    #[arg(long, value_name = "N", requires = "phase_index")]
    pub phase_count: Option<u32>,
    /// How the phase becomes the offset in each interval T: prefix-even T·vdc(I) (the van der Corput sequence 0, 1/2, 1/4, 3/4, ...: clones 0 to n-1 run evenly spread for every n) or fleet-even I·T/N (even only when all N run) [default on create: prefix-even].
    #[arg(long, value_enum, value_name = "RULE")]
    pub phasing: Option<crate::clone::run_mode::Phasing>,
    /// MemoryMax of the clone's service: bytes or a K/M/G/T size, e.g. 512M; none to unset.
    #[arg(long, value_name = "SIZE")]
    pub memory_max: Option<String>,
    /// CPUQuota of the clone's service in percent of one CPU, e.g. 50%; none to unset.
    #[arg(long, value_name = "PERCENT")]
    pub cpu_quota: Option<String>,
    /// TasksMax of the clone's service; none to unset.
    #[arg(long, value_name = "N")]
    pub tasks_max: Option<String>,
    /// A JSON object of per-clone external facts ({} for none).
    #[arg(long, value_name = "PATH")]
    pub facts_file: Option<std::path::PathBuf>,
    /// How many generated facts (clone_army_fact_0001...) the clone reports; 0 for none.
    #[arg(long, value_name = "COUNT")]
    pub generated_facts: Option<u32>,
    /// Percent of the generated facts whose values change on every run.
    #[arg(long, value_name = "P")]
    pub churn_percent: Option<u32>,
    /// Apply mode: a host directory with manifests/ (and modules/) bound read-only into the clone at /srv/clone-army-apply; only with run mode apply.
    #[arg(long, value_name = "DIR")]
    pub apply_source: Option<std::path::PathBuf>,
    /// Run the agent in noop (true): full catalogs compiled and evaluated, nothing changed in the clone [default on create: false].
    #[arg(long, value_name = "BOOL", action = clap::ArgAction::Set)]
    pub agent_noop: Option<bool>,
}

impl CloneCreateArgs {
    pub fn into_request(self) -> crate::clone::CloneRequest {
        crate::clone::CloneRequest {
            name: self.name,
            base: self.base,
            server: self.server,
            server_port: self.server_port,
            certname: self.certname,
            start: self.start,
            shape: Some(self.shape.into_request()),
            secret_files: crate::clone::SecretFiles {
                root_password_hash_file: self.root_password_hash_file,
                challenge_password_file: self.challenge_password_file,
            },
            twin_file: self.twin_file,
            extensions: self.extensions,
        }
    }
}

impl ShapeArgs {
    pub fn into_request(self) -> crate::clone::shape::ShapeRequest {
        crate::clone::shape::ShapeRequest {
            run_mode: self.run_mode,
            runinterval: self.runinterval,
            splay: self.splay,
            phase_index: self.phase_index,
            phase_count: self.phase_count,
            phasing: self.phasing,
            memory_max: self.memory_max,
            cpu_quota: self.cpu_quota,
            tasks_max: self.tasks_max,
            facts_file: self.facts_file,
            generated_facts: self.generated_facts,
            churn_percent: self.churn_percent,
            apply_source: self.apply_source,
            agent_noop: self.agent_noop,
        }
    }
}

/// `--server-port`: a port of [`crate::clone::puppet_conf::SERVER_PORTS`].
fn server_port_parser() -> clap::builder::RangedI64ValueParser<u16> {
    let ports = crate::clone::puppet_conf::SERVER_PORTS;
    clap::value_parser!(u16).range(i64::from(*ports.start())..=i64::from(*ports.end()))
}
