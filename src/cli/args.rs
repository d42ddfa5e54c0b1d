//! Command-line definitions only: raw arguments, no I/O.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Printed under every `--help`.
pub(crate) const EXIT_CODES: &str = "\
Exit codes:
  0  success (admit: admitted)
  1  findings or a verdict that fails (check errors, simulate FAIL, admit refused)
  2  usage, input or runtime errors (the message names the file, line and key)
  3  partial success (some BMCs or hosts failed; the rest were merged)

Environment:
  RACKPLAN_SITE  site directory when --site is not given (else the current directory, if it holds site.yaml)
  NO_COLOR       no colour in diagnostics (as --color never)
  COLUMNS        table width on a terminal
  RUST_LOG       log filter, e.g. rackplan=debug (overrides -q and -v)";

#[derive(Debug, Parser)]
#[command(
    name = "rackplan",
    version,
    about = "From racked servers to validated Harvester install configs and a failure-aware capacity verdict",
    propagate_version = true,
    after_help = EXIT_CODES
)]
pub struct Cli {
    /// Only errors on stderr: no progress bars, notes or warnings.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub(crate) quiet: bool,
    /// More detail on stderr (-v info, -vv debug, -vvv trace); RUST_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub(crate) verbose: u8,
    /// Colour in diagnostics.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub(crate) color: ColorChoice,
    /// Output format.
    #[arg(long, global = true, value_enum, default_value_t = Output::Table)]
    pub(crate) output: Output,
    /// Seconds to wait for another rackplan writing the same site to finish (default: do
    /// not wait; say who holds the site and exit 2).
    #[arg(long, global = true, value_name = "SECS", default_value_t = 0.0)]
    pub(crate) wait_lock: f64,
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// Colour when stderr is a terminal and NO_COLOR is not set.
    Auto,
    Always,
    Never,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Output {
    Table,
    Json,
}

#[derive(Debug, Args)]
pub struct SiteArg {
    /// Site directory holding site.yaml, nodes.yaml and allocations.yaml (default:
    /// RACKPLAN_SITE, else the current directory).
    #[arg(
        long,
        value_name = "DIR",
        env = "RACKPLAN_SITE",
        default_value = ".",
        hide_env_values = true
    )]
    pub(crate) site: PathBuf,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Start a site: site.yaml with every key, bmcs.yaml, profiles and schemas beside it;
    /// with --from, profiles derived from a discovered inventory.
    Init {
        /// The new site's folder (made if missing).
        dir: PathBuf,
        /// A discovered nodes.yaml: copied in with roles annotated, profiles derived from it.
        #[arg(long, value_name = "NODES_YAML")]
        from: Option<PathBuf>,
        /// Site name (default: the folder's name).
        #[arg(long)]
        name: Option<String>,
        /// Replace site.yaml, bmcs.yaml and the profiles that exist. Never the secrets;
        /// never .gitignore (the lines it lacks are added, with or without --force); the
        /// schemas are always rewritten, and with --from the profiles and nodes.yaml too.
        #[arg(long)]
        force: bool,
    },
    /// Inventory servers from their BMCs (Redfish) or over SSH into nodes.yaml.
    #[command(subcommand)]
    Discover(Discover),
    /// Hold every node against its role profile and the site; exit 1 on errors.
    Check(CheckArgs),
    /// Assign roles, hostnames and addresses into allocations.yaml (the lock).
    Plan {
        #[command(flatten)]
        site: SiteArg,
        /// Free the allocation of a node that left the inventory (repeatable).
        #[arg(long, value_name = "ID")]
        release: Vec<String>,
        /// Show the plan without writing allocations.yaml.
        #[arg(long)]
        dry_run: bool,
    },
    /// Write install configs, iPXE scripts and manifests into iso-config/<site>/.
    Render {
        #[command(flatten)]
        site: SiteArg,
        /// Output directory (default: iso-config/<site name> beside inventory/).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
    /// Capacity and failure simulation of a scenario.
    Simulate {
        /// Scenario file, e.g. simulations/reference-factory.yaml. With --from-cluster it is
        /// optional and adds what-ifs (teams, shapes, failure rates) to the running fleet;
        /// with --site alone it is the site's scenario.yaml.
        scenario: Option<PathBuf>,
        /// Start from the fleet as it runs: kubectl -o yaml/json output (a file or a folder)
        /// or a Harvester support bundle (.zip or unpacked). Its settings win over the
        /// scenario's.
        #[arg(long, value_name = "PATH")]
        from_cluster: Option<PathBuf>,
        /// With --from-cluster: can these nodes go into maintenance now (NODE[,NODE]). It
        /// answers that question alone: no review report, charts or rebuild what-if.
        #[arg(
            long,
            value_name = "NODES",
            value_delimiter = ',',
            requires = "from_cluster",
            conflicts_with_all = ["report", "plot", "rebuild_data", "upgrade"]
        )]
        drain: Vec<String>,
        /// The rolling upgrade: every node through maintenance one at a time, in Harvester's
        /// order (or --order): each VM's move or stop, each volume's fate, the window, the
        /// blockers and a better order. Exit 0 when it completes cleanly. With --report the
        /// review report gains its section and timeline chart.
        #[arg(long, conflicts_with_all = ["rebuild_data", "plot"])]
        upgrade: bool,
        /// With --upgrade: the nodes in this order (NODE[,NODE]); nodes left out follow in
        /// Harvester's order.
        #[arg(
            long,
            value_name = "NODES",
            value_delimiter = ',',
            requires = "upgrade"
        )]
        order: Vec<String>,
        /// Write the review report: review.html (one self-contained file) or review.md
        /// (with its SVG charts beside it).
        #[arg(long, value_name = "FILE")]
        report: Option<PathBuf>,
        /// The fleet is this site's nodes (nodes.yaml and its role profiles) instead of the
        /// scenario's node classes; with no scenario given, the site's own scenario.yaml
        /// (which `rackplan init` writes) is simulated.
        #[arg(long, value_name = "DIR")]
        site: Option<PathBuf>,
        /// Write SVG charts into this directory.
        #[arg(long, value_name = "DIR")]
        plot: Option<PathBuf>,
        /// Rebuild what-if: the failed node holds this much replica data (15TiB, 8TB, 500GiB).
        #[arg(long, value_name = "SIZE")]
        rebuild_data: Option<String>,
        /// Rebuild what-if: the host that fails (default: the first of the largest class).
        #[arg(long, value_name = "HOST", requires = "rebuild_data")]
        rebuild_node: Option<String>,
        /// Seconds the review may take before max clusters stops and answers "at least N"
        /// (every count it checked passes; JSON `lower_bound: true`) and the timeline stops
        /// after the months it checked. Ctrl-C stops them the same way (again: quit).
        /// Default: no limit.
        #[arg(long, value_name = "SECS")]
        budget: Option<f64>,
    },
    /// Capacity gate for one cluster request: within the team's vCPU quota, and the fleet
    /// still survives every node and rack failure with it. Exit 0 admitted, 1 refused.
    Admit {
        /// The request: `team`, `shape` (or `pools`), `count`, optional `duration` (72h), or a
        /// Rancher Cluster export labelled `rackplan.io/team`.
        request: PathBuf,
        /// The scenario with the fleet, the shapes and the teams' quotas.
        scenario: PathBuf,
        /// The fleet is this site's nodes (nodes.yaml and its role profiles) instead of the
        /// scenario's node classes.
        #[arg(long, value_name = "DIR")]
        site: Option<PathBuf>,
        /// Judge the request on the fleet as it runs: a kubectl dump or a support bundle
        /// (its Nodes, VMs, volumes and settings replace the scenario's fleet and clusters).
        #[arg(long, value_name = "PATH", conflicts_with = "site")]
        from_cluster: Option<PathBuf>,
        /// Judge the request at this date (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ); default now.
        #[arg(long, value_name = "DATE")]
        at: Option<String>,
    },
    /// Write the reference generated from the code: JSON Schemas of every input file, a
    /// page per format and per command, shell completions and man pages.
    Docs {
        /// Folder to write into.
        #[arg(long, value_name = "DIR", default_value = "docs")]
        out: PathBuf,
        /// Write nothing; exit 1 if any file differs from what the code generates.
        #[arg(long)]
        check: bool,
    },
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions {
        /// The shell the script is for.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Per-node install state, as `rackplan serve` records it in DIR/install-state.yaml
    /// (no server needed), or from a running server's /status with --url.
    Status {
        #[command(flatten)]
        site: SiteArg,
        /// Ask the server at this base URL instead of reading the site's state file.
        #[arg(long, value_name = "URL")]
        url: Option<String>,
        /// Poll until every node is installed or failed (or --count polls).
        #[arg(long)]
        watch: bool,
        /// Seconds between polls with --watch.
        #[arg(long, default_value_t = 5.0, value_name = "SECS")]
        interval: f64,
        /// Stop after this many polls with --watch.
        #[arg(long, value_name = "N")]
        count: Option<u32>,
    },
    /// Serve iPXE scripts and install configs over HTTP for PXE installs.
    Serve(ServeArgs),
    /// Run the request operator: judge ClusterRequests against quota and failure headroom
    /// on the fleet as it runs, deliver admitted ones as Rancher clusters from the
    /// catalogue, and delete them when their lifetime is over.
    Operator(OperatorArgs),
    /// Serve the teams' self-service pages: the shapes a team may ask for, the operator's
    /// verdict before it asks, its requests followed to their access instructions. Every
    /// call is made with the signed-in user's own token.
    Portal(PortalArgs),
    /// Boot nodes into the installer over Redfish virtual media (prints the plan unless --yes).
    Boot(BootArgs),
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub(crate) site: SiteArg,
    /// Only this node (id or hostname; repeatable). The exit code follows these nodes.
    #[arg(long, value_name = "NODE")]
    pub(crate) node: Vec<String>,
    /// Least severity shown: error, warning or info (default: warning in the table,
    /// everything in --output json).
    #[arg(long, value_enum)]
    pub(crate) severity: Option<SeverityArg>,
    /// The cabling table instead: every NIC's network, switch, port (from LLDP) and
    /// verdict, then each switch's ports with speed, tagged and native VLANs and frame size.
    #[arg(long, conflicts_with = "catalogue")]
    pub(crate) cabling: bool,
    /// The catalogue's promises instead: per shape, whether the rendered objects keep
    /// etcd snapshots scheduled and leaving the cluster, an audit policy that logs, the
    /// default ingress off, an allowed version, expiry, nothing installed at boot. Exit 1
    /// when one is not kept.
    #[arg(long)]
    pub(crate) catalogue: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SeverityArg {
    Error,
    Warning,
    Info,
}

#[derive(Debug, Subcommand)]
pub enum Discover {
    /// Crawl the BMCs listed in bmcs.yaml into nodes.yaml.
    Redfish(RedfishArgs),
    /// Probe hosts over SSH (lsblk, ip, lscpu, ...) and merge with the BMC view.
    Ssh(SshArgs),
}

#[derive(Debug, Args)]
pub struct RedfishArgs {
    #[command(flatten)]
    pub(crate) site: SiteArg,
    /// Accept the certificate of every HTTPS BMC that has no pin or CA bundle yet, and
    /// record its SHA-256 pin in bmcs.yaml.
    #[arg(long)]
    pub(crate) trust_on_first_use: bool,
    /// BMCs crawled at once.
    #[arg(long, default_value_t = 64, value_name = "N")]
    pub(crate) concurrency: usize,
    /// Requests in flight to one BMC.
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub(crate) per_bmc: usize,
    /// Seconds allowed for one request.
    #[arg(long, default_value_t = 10.0, value_name = "SECS")]
    pub(crate) request_timeout: f64,
    /// Seconds allowed for one whole BMC, every request and retry included: a BMC that
    /// hangs costs at most this, and the others go on.
    #[arg(long, default_value_t = 45.0, value_name = "SECS")]
    pub(crate) bmc_timeout: f64,
    /// Retries of a failed request (5xx, 429, reset, timeout).
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub(crate) retries: u32,
}

#[derive(Debug, Args)]
pub struct SshArgs {
    #[command(flatten)]
    pub(crate) site: SiteArg,
    /// Hosts as `user@host:port,...` (default: ssh.yaml's hosts, else the planned
    /// management addresses of allocations.yaml).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub(crate) hosts: Vec<String>,
    /// Private key file to log in with, after the keys of ssh-agent (SSH_AUTH_SOCK).
    #[arg(long, value_name = "FILE")]
    pub(crate) identity: Option<std::path::PathBuf>,
    /// File holding the identity's passphrase (else RACKPLAN_SSH_PASSPHRASE, or
    /// `passphrase` in ssh.yaml); never the passphrase itself on the command line.
    #[arg(long, value_name = "FILE")]
    pub(crate) passphrase_file: Option<std::path::PathBuf>,
    /// Do not use ssh-agent even when SSH_AUTH_SOCK is set.
    #[arg(long)]
    pub(crate) no_agent: bool,
    /// known_hosts file the site owns (default: DIR/known_hosts).
    #[arg(long, value_name = "FILE")]
    pub(crate) known_hosts: Option<std::path::PathBuf>,
    /// Record the key of a host not yet in known_hosts (a changed key is still refused).
    #[arg(long)]
    pub(crate) accept_new: bool,
    /// User when a host does not name one.
    #[arg(long, value_name = "USER")]
    pub(crate) user: Option<String>,
    #[arg(long, default_value_t = 32, value_name = "N")]
    pub(crate) concurrency: usize,
    /// Seconds allowed per host.
    #[arg(long, default_value_t = 30.0, value_name = "SECS")]
    pub(crate) timeout: f64,
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub(crate) retries: u32,
}

#[derive(Debug, Args)]
pub struct BootArgs {
    #[command(flatten)]
    pub(crate) site: SiteArg,
    /// Node id or hostname (repeatable).
    #[arg(long, value_name = "ID")]
    pub(crate) node: Vec<String>,
    /// Every node of the inventory that has a BMC.
    #[arg(long)]
    pub(crate) all: bool,
    /// Carry out the plan (without it, only the requests are printed).
    #[arg(long)]
    pub(crate) yes: bool,
    /// Eject the ISO and clear the boot override instead of booting.
    #[arg(long, conflicts_with = "bios")]
    pub(crate) eject: bool,
    /// Write the BIOS attributes `check` names (virtualization, boot mode, IOMMU, SR-IOV
    /// as the role's profile asks) to the pending BIOS settings instead of booting; read
    /// them back. Applied at the next reset.
    #[arg(long)]
    pub(crate) bios: bool,
    /// Installer ISO URL (default: harvester.iso_url of site.yaml).
    #[arg(long, value_name = "URL")]
    pub(crate) iso: Option<String>,
    /// Boot nodes even if they are not planned, not rendered or have error findings (the
    /// output records that the gate was overridden).
    #[arg(long)]
    pub(crate) force: bool,
    /// Restart a host that is powered on (without it, a running host is left alone).
    #[arg(long)]
    pub(crate) restart_running: bool,
    /// Seconds to wait for the node to report power on after the reset.
    #[arg(long, default_value_t = 600.0, value_name = "SECS")]
    pub(crate) wait: f64,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub(crate) site: SiteArg,
    /// Address to listen on (default: serve.listen of site.yaml, else 127.0.0.1:8080;
    /// port 0 picks a free one).
    #[arg(long, value_name = "ADDR")]
    pub(crate) listen: Option<String>,
    /// The URL nodes reach this server at (default: harvester.pxe_base_url of site.yaml).
    #[arg(long, value_name = "URL")]
    pub(crate) base_url: Option<String>,
    /// Folder with the installer's kernel, initrd, rootfs and ISO, served as they are
    /// (refused if it holds rendered install configs).
    #[arg(long, value_name = "DIR")]
    pub(crate) artifacts: Option<std::path::PathBuf>,
    /// Hand a fresh config token to this node (hostname or id) even though its install
    /// already SUCCEEDED (repeatable). Without it, an installed node is told to boot its disk,
    /// also after a restart (DIR/install-state.yaml keeps each node's progress).
    #[arg(long, value_name = "NODE")]
    pub(crate) reinstall: Vec<String>,
}

#[derive(Debug, Args)]
pub struct OperatorArgs {
    /// The rendered catalogue folder (`catalogue/` of `rackplan render`): the shapes
    /// requests may ask for, and the Rancher objects delivered for them.
    #[arg(long, value_name = "DIR")]
    pub(crate) catalogue: PathBuf,
    /// The scenario with the teams and their vCPU quotas (the site's `catalogue.scenario`),
    /// the headroom rules and platform defaults; the fleet is read from Harvester.
    #[arg(long, value_name = "FILE")]
    pub(crate) scenario: PathBuf,
    /// A ConfigMap (in --namespace) mapping team to vCPU quota, read at every judgement,
    /// over the scenario's quotas.
    #[arg(long, value_name = "NAME")]
    pub(crate) quotas: Option<String>,
    /// Kubeconfig of Rancher's cluster (requests, Rancher Clusters, events, the lease);
    /// default: KUBECONFIG, else the in-cluster service account.
    #[arg(long, value_name = "FILE")]
    pub(crate) kubeconfig: Option<PathBuf>,
    /// Kubeconfig of the Harvester cluster the fleet is read from; default: Rancher's.
    #[arg(long, value_name = "FILE")]
    pub(crate) harvester_kubeconfig: Option<PathBuf>,
    /// Namespace of the Rancher clusters, the quota ConfigMap and the Lease; default: the
    /// catalogue's.
    #[arg(long, value_name = "NS")]
    pub(crate) namespace: Option<String>,
    /// Label selector of the team namespaces where requests are made; each must also carry
    /// `rackplan.io/team: <team>` (its team), which only the platform team sets.
    #[arg(long, value_name = "SELECTOR", default_value = "rackplan.io/team")]
    pub(crate) team_namespaces: String,
    /// Rancher's address, for the access instructions written on each ready request
    /// (`https://rancher.example.com`).
    #[arg(long, value_name = "URL")]
    pub(crate) rancher_url: Option<String>,
    /// How long the final etcd snapshot of an expiring cluster is waited for before the
    /// cluster is deleted without it.
    #[arg(long, value_name = "DURATION", default_value = "15m")]
    pub(crate) snapshot_timeout: String,
    /// The delivery promise: a request not Ready this long after its admission is marked
    /// `DeliveryLate` (default: the scenario's `delivery:` target for the shape, else 15m).
    #[arg(long, value_name = "DURATION")]
    pub(crate) delivery_target: Option<String>,
    /// Warn (an event, phase Expiring) this long before a cluster expires.
    #[arg(long, value_name = "DURATION", default_value = "24h")]
    pub(crate) warn_before: String,
    /// The longest lifetime a request is granted, counted from its admission, extensions
    /// included (a team's own `max_lifetime` overrides it).
    #[arg(long, value_name = "DURATION", default_value = "90d")]
    pub(crate) max_lifetime: String,
    /// A Kubernetes version requests may ask for besides the catalogue's (repeatable).
    #[arg(long, value_name = "VERSION")]
    pub(crate) allow_version: Vec<String>,
    /// Write status only: create no cluster, delete none, add no finalizer.
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// Address of /metrics and /healthz (port 0 picks a free one).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:9464")]
    pub(crate) listen: String,
    /// Act without holding the lease (one replica only).
    #[arg(long)]
    pub(crate) no_leader_election: bool,
    /// Seconds a leader's lease lasts without renewal.
    #[arg(long, value_name = "SECONDS", default_value_t = 15.0)]
    pub(crate) lease_seconds: f64,
    /// Longest time in seconds between two looks at a request.
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0)]
    pub(crate) resync_seconds: f64,
    /// Read "now" from this file (an RFC 3339 time) at every look: to rehearse expiries
    /// (a new time is seen at the next look, --resync-seconds at the latest).
    #[arg(long, value_name = "FILE")]
    pub(crate) clock_file: Option<PathBuf>,
    /// This replica's name in the lease and on events; default: POD_NAME, else
    /// hostname-pid.
    #[arg(long, value_name = "NAME")]
    pub(crate) identity: Option<String>,
}

#[derive(Debug, Args)]
pub struct PortalArgs {
    /// The rendered catalogue folder the operator delivers from.
    #[arg(long, value_name = "DIR")]
    pub(crate) catalogue: PathBuf,
    /// The scenario the operator judges with (teams, quotas, headroom rules).
    #[arg(long, value_name = "FILE")]
    pub(crate) scenario: PathBuf,
    /// The operator's quota ConfigMap (in --namespace), over the scenario's quotas.
    #[arg(long, value_name = "NAME")]
    pub(crate) quotas: Option<String>,
    /// Kubeconfig of Rancher's cluster: its server and CA serve every user's calls (made
    /// with the user's token); its identity only reads what a check reads. Default:
    /// KUBECONFIG, else the in-cluster service account.
    #[arg(long, value_name = "FILE")]
    pub(crate) kubeconfig: Option<PathBuf>,
    /// Kubeconfig of the Harvester cluster a check reads the fleet from; default: Rancher's.
    #[arg(long, value_name = "FILE")]
    pub(crate) harvester_kubeconfig: Option<PathBuf>,
    /// Namespace of the quota ConfigMap; default: the catalogue's.
    #[arg(long, value_name = "NS")]
    pub(crate) namespace: Option<String>,
    /// Label selector of the team namespaces (as given to the operator).
    #[arg(long, value_name = "SELECTOR", default_value = "rackplan.io/team")]
    pub(crate) team_namespaces: String,
    /// The operator's --max-lifetime.
    #[arg(long, value_name = "DURATION", default_value = "90d")]
    pub(crate) max_lifetime: String,
    /// The operator's --allow-version (repeatable).
    #[arg(long, value_name = "VERSION")]
    pub(crate) allow_version: Vec<String>,
    /// The operator's --delivery-target.
    #[arg(long, value_name = "DURATION")]
    pub(crate) delivery_target: Option<String>,
    /// Address to serve on (plain HTTP: put it behind TLS; port 0 picks a free one).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    pub(crate) listen: String,
    /// How long a sign-in lasts.
    #[arg(long, value_name = "DURATION", default_value = "8h")]
    pub(crate) session: String,
    /// Read "now" from this file (the operator's --clock-file).
    #[arg(long, value_name = "FILE")]
    pub(crate) clock_file: Option<PathBuf>,
    /// Sign-in by an authenticating proxy instead of a token: the header in which it names
    /// the user (`X-Forwarded-User`). The portal must be reachable only through the proxy,
    /// and the proxy must replace this header, never pass on a client's.
    #[arg(long, value_name = "HEADER", requires = "impersonator_kubeconfig")]
    pub(crate) proxy_user_header: Option<String>,
    /// The proxy's header of comma-separated groups (`X-Forwarded-Groups`).
    #[arg(long, value_name = "HEADER", requires = "proxy_user_header")]
    pub(crate) proxy_groups_header: Option<String>,
    /// With --proxy-user-header: the kubeconfig of a service account that may impersonate
    /// users and groups and nothing else; every call is made as the proxy's user through it.
    #[arg(long, value_name = "FILE", requires = "proxy_user_header")]
    pub(crate) impersonator_kubeconfig: Option<PathBuf>,
}
