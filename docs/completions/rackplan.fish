# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_rackplan_global_optspecs
    string join \n q/quiet v/verbose color= output= wait-lock= h/help V/version
end

function __fish_rackplan_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_rackplan_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_rackplan_using_subcommand
    set -l cmd (__fish_rackplan_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c rackplan -n "__fish_rackplan_needs_command" -l color -d 'Colour in diagnostics' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is not set'
always\t''
never\t''"
complete -c rackplan -n "__fish_rackplan_needs_command" -l output -d 'Output format' -r -f -a "table\t''
json\t''"
complete -c rackplan -n "__fish_rackplan_needs_command" -l wait-lock -d 'Seconds to wait for another rackplan writing the same site to finish (default: do not wait; say who holds the site and exit 2)' -r
complete -c rackplan -n "__fish_rackplan_needs_command" -s q -l quiet -d 'Only errors on stderr: no progress bars, notes or warnings'
complete -c rackplan -n "__fish_rackplan_needs_command" -s v -l verbose -d 'More detail on stderr (-v info, -vv debug, -vvv trace); RUST_LOG overrides'
complete -c rackplan -n "__fish_rackplan_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rackplan -n "__fish_rackplan_needs_command" -s V -l version -d 'Print version'
complete -c rackplan -n "__fish_rackplan_needs_command" -f -a "init" -d 'Start a site: site.yaml with every key, bmcs.yaml, profiles and schemas beside it; with --from, profiles derived from a discovered inventory'
complete -c rackplan -n "__fish_rackplan_needs_command" -f -a "discover" -d 'Inventory servers from their BMCs (Redfish) or over SSH into nodes.yaml'
complete -c rackplan -n "__fish_rackplan_needs_command" -f -a "check" -d 'Hold every node against its role profile and the site; exit 1 on errors'
complete -c rackplan -n "__fish_rackplan_needs_command" -f -a "plan" -d 'Assign roles, hostnames and addresses into allocations.yaml (the lock)'
complete -c rackplan -n "__fish_rackplan_needs_command" -f -a "render" -d 'Write install configs, iPXE scripts and manifests into iso-config/<site>/'
complete -c rackplan -n "__fish_rackplan_needs_command" -f -a "simulate" -d 'Capacity and failure simulation of a scenario'
complete -c rackplan -n "__fish_rackplan_needs_command" -f -a "admit" -d 'Capacity gate for one cluster request: within the team\'s vCPU quota, and the fleet still survives every node and rack failure with it. Exit 0 admitted, 1 refused'
complete -c rackplan -n "__fish_rackplan_needs_command" -f -a "docs" -d 'Write the reference generated from the code: JSON Schemas of every input file, a page per format and per command, shell completions and man pages'
complete -c rackplan -n "__fish_rackplan_needs_command" -f -a "completions" -d 'Print a shell completion script (bash, zsh, fish, elvish, powershell)'
complete -c rackplan -n "__fish_rackplan_needs_command" -f -a "status" -d 'Per-node install state, as `rackplan serve` records it in DIR/install-state.yaml (no server needed), or from a running server\'s /status with --url'
complete -c rackplan -n "__fish_rackplan_needs_command" -f -a "serve" -d 'Serve iPXE scripts and install configs over HTTP for PXE installs'
complete -c rackplan -n "__fish_rackplan_needs_command" -f -a "operator" -d 'Run the request operator: judge ClusterRequests against quota and failure headroom on the fleet as it runs, deliver admitted ones as Rancher clusters from the catalogue, and delete them when their lifetime is over'
complete -c rackplan -n "__fish_rackplan_needs_command" -f -a "portal" -d 'Serve the teams\' self-service pages: the shapes a team may ask for, the operator\'s verdict before it asks, its requests followed to their access instructions. Every call is made with the signed-in user\'s own token'
complete -c rackplan -n "__fish_rackplan_needs_command" -f -a "boot" -d 'Boot nodes into the installer over Redfish virtual media (prints the plan unless --yes)'
complete -c rackplan -n "__fish_rackplan_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c rackplan -n "__fish_rackplan_using_subcommand init" -l from -d 'A discovered nodes.yaml: copied in with roles annotated, profiles derived from it' -r -F
complete -c rackplan -n "__fish_rackplan_using_subcommand init" -l name -d 'Site name (default: the folder\'s name)' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand init" -l color -d 'Colour in diagnostics' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is not set'
always\t''
never\t''"
complete -c rackplan -n "__fish_rackplan_using_subcommand init" -l output -d 'Output format' -r -f -a "table\t''
json\t''"
complete -c rackplan -n "__fish_rackplan_using_subcommand init" -l wait-lock -d 'Seconds to wait for another rackplan writing the same site to finish (default: do not wait; say who holds the site and exit 2)' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand init" -l force -d 'Replace site.yaml, bmcs.yaml and the profiles that exist. Never the secrets; never .gitignore (the lines it lacks are added, with or without --force); the schemas are always rewritten, and with --from the profiles and nodes.yaml too'
complete -c rackplan -n "__fish_rackplan_using_subcommand init" -s q -l quiet -d 'Only errors on stderr: no progress bars, notes or warnings'
complete -c rackplan -n "__fish_rackplan_using_subcommand init" -s v -l verbose -d 'More detail on stderr (-v info, -vv debug, -vvv trace); RUST_LOG overrides'
complete -c rackplan -n "__fish_rackplan_using_subcommand init" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rackplan -n "__fish_rackplan_using_subcommand init" -s V -l version -d 'Print version'
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and not __fish_seen_subcommand_from redfish ssh help" -l color -d 'Colour in diagnostics' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is not set'
always\t''
never\t''"
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and not __fish_seen_subcommand_from redfish ssh help" -l output -d 'Output format' -r -f -a "table\t''
json\t''"
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and not __fish_seen_subcommand_from redfish ssh help" -l wait-lock -d 'Seconds to wait for another rackplan writing the same site to finish (default: do not wait; say who holds the site and exit 2)' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and not __fish_seen_subcommand_from redfish ssh help" -s q -l quiet -d 'Only errors on stderr: no progress bars, notes or warnings'
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and not __fish_seen_subcommand_from redfish ssh help" -s v -l verbose -d 'More detail on stderr (-v info, -vv debug, -vvv trace); RUST_LOG overrides'
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and not __fish_seen_subcommand_from redfish ssh help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and not __fish_seen_subcommand_from redfish ssh help" -s V -l version -d 'Print version'
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and not __fish_seen_subcommand_from redfish ssh help" -f -a "redfish" -d 'Crawl the BMCs listed in bmcs.yaml into nodes.yaml'
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and not __fish_seen_subcommand_from redfish ssh help" -f -a "ssh" -d 'Probe hosts over SSH (lsblk, ip, lscpu, ...) and merge with the BMC view'
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and not __fish_seen_subcommand_from redfish ssh help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and __fish_seen_subcommand_from redfish" -l site -d 'Site directory holding site.yaml, nodes.yaml and allocations.yaml (default: RACKPLAN_SITE, else the current directory)' -r -F
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and __fish_seen_subcommand_from redfish" -l concurrency -d 'BMCs crawled at once' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and __fish_seen_subcommand_from redfish" -l per-bmc -d 'Requests in flight to one BMC' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and __fish_seen_subcommand_from redfish" -l request-timeout -d 'Seconds allowed for one request' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and __fish_seen_subcommand_from redfish" -l bmc-timeout -d 'Seconds allowed for one whole BMC, every request and retry included: a BMC that hangs costs at most this, and the others go on' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and __fish_seen_subcommand_from redfish" -l retries -d 'Retries of a failed request (5xx, 429, reset, timeout)' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and __fish_seen_subcommand_from redfish" -l color -d 'Colour in diagnostics' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is not set'
always\t''
never\t''"
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and __fish_seen_subcommand_from redfish" -l output -d 'Output format' -r -f -a "table\t''
json\t''"
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and __fish_seen_subcommand_from redfish" -l wait-lock -d 'Seconds to wait for another rackplan writing the same site to finish (default: do not wait; say who holds the site and exit 2)' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and __fish_seen_subcommand_from redfish" -l trust-on-first-use -d 'Accept the certificate of every HTTPS BMC that has no pin or CA bundle yet, and record its SHA-256 pin in bmcs.yaml'
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and __fish_seen_subcommand_from redfish" -s q -l quiet -d 'Only errors on stderr: no progress bars, notes or warnings'
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and __fish_seen_subcommand_from redfish" -s v -l verbose -d 'More detail on stderr (-v info, -vv debug, -vvv trace); RUST_LOG overrides'
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and __fish_seen_subcommand_from redfish" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and __fish_seen_subcommand_from redfish" -s V -l version -d 'Print version'
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and __fish_seen_subcommand_from ssh" -l site -d 'Site directory holding site.yaml, nodes.yaml and allocations.yaml (default: RACKPLAN_SITE, else the current directory)' -r -F
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and __fish_seen_subcommand_from ssh" -l hosts -d 'Hosts as `user@host:port,...` (default: ssh.yaml\'s hosts, else the planned management addresses of allocations.yaml)' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and __fish_seen_subcommand_from ssh" -l identity -d 'Private key file to log in with, after the keys of ssh-agent (SSH_AUTH_SOCK)' -r -F
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and __fish_seen_subcommand_from ssh" -l passphrase-file -d 'File holding the identity\'s passphrase (else RACKPLAN_SSH_PASSPHRASE, or `passphrase` in ssh.yaml); never the passphrase itself on the command line' -r -F
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and __fish_seen_subcommand_from ssh" -l known-hosts -d 'known_hosts file the site owns (default: DIR/known_hosts)' -r -F
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and __fish_seen_subcommand_from ssh" -l user -d 'User when a host does not name one' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and __fish_seen_subcommand_from ssh" -l concurrency -r
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and __fish_seen_subcommand_from ssh" -l timeout -d 'Seconds allowed per host' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and __fish_seen_subcommand_from ssh" -l retries -r
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and __fish_seen_subcommand_from ssh" -l color -d 'Colour in diagnostics' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is not set'
always\t''
never\t''"
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and __fish_seen_subcommand_from ssh" -l output -d 'Output format' -r -f -a "table\t''
json\t''"
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and __fish_seen_subcommand_from ssh" -l wait-lock -d 'Seconds to wait for another rackplan writing the same site to finish (default: do not wait; say who holds the site and exit 2)' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and __fish_seen_subcommand_from ssh" -l no-agent -d 'Do not use ssh-agent even when SSH_AUTH_SOCK is set'
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and __fish_seen_subcommand_from ssh" -l accept-new -d 'Record the key of a host not yet in known_hosts (a changed key is still refused)'
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and __fish_seen_subcommand_from ssh" -s q -l quiet -d 'Only errors on stderr: no progress bars, notes or warnings'
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and __fish_seen_subcommand_from ssh" -s v -l verbose -d 'More detail on stderr (-v info, -vv debug, -vvv trace); RUST_LOG overrides'
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and __fish_seen_subcommand_from ssh" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and __fish_seen_subcommand_from ssh" -s V -l version -d 'Print version'
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and __fish_seen_subcommand_from help" -f -a "redfish" -d 'Crawl the BMCs listed in bmcs.yaml into nodes.yaml'
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and __fish_seen_subcommand_from help" -f -a "ssh" -d 'Probe hosts over SSH (lsblk, ip, lscpu, ...) and merge with the BMC view'
complete -c rackplan -n "__fish_rackplan_using_subcommand discover; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c rackplan -n "__fish_rackplan_using_subcommand check" -l site -d 'Site directory holding site.yaml, nodes.yaml and allocations.yaml (default: RACKPLAN_SITE, else the current directory)' -r -F
complete -c rackplan -n "__fish_rackplan_using_subcommand check" -l node -d 'Only this node (id or hostname; repeatable). The exit code follows these nodes' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand check" -l severity -d 'Least severity shown: error, warning or info (default: warning in the table, everything in --output json)' -r -f -a "error\t''
warning\t''
info\t''"
complete -c rackplan -n "__fish_rackplan_using_subcommand check" -l color -d 'Colour in diagnostics' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is not set'
always\t''
never\t''"
complete -c rackplan -n "__fish_rackplan_using_subcommand check" -l output -d 'Output format' -r -f -a "table\t''
json\t''"
complete -c rackplan -n "__fish_rackplan_using_subcommand check" -l wait-lock -d 'Seconds to wait for another rackplan writing the same site to finish (default: do not wait; say who holds the site and exit 2)' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand check" -l cabling -d 'The cabling table instead: every NIC\'s network, switch, port (from LLDP) and verdict, then each switch\'s ports with speed, tagged and native VLANs and frame size'
complete -c rackplan -n "__fish_rackplan_using_subcommand check" -l catalogue -d 'The catalogue\'s promises instead: per shape, whether the rendered objects keep etcd snapshots scheduled and leaving the cluster, an audit policy that logs, the default ingress off, an allowed version, expiry, nothing installed at boot. Exit 1 when one is not kept'
complete -c rackplan -n "__fish_rackplan_using_subcommand check" -s q -l quiet -d 'Only errors on stderr: no progress bars, notes or warnings'
complete -c rackplan -n "__fish_rackplan_using_subcommand check" -s v -l verbose -d 'More detail on stderr (-v info, -vv debug, -vvv trace); RUST_LOG overrides'
complete -c rackplan -n "__fish_rackplan_using_subcommand check" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rackplan -n "__fish_rackplan_using_subcommand check" -s V -l version -d 'Print version'
complete -c rackplan -n "__fish_rackplan_using_subcommand plan" -l site -d 'Site directory holding site.yaml, nodes.yaml and allocations.yaml (default: RACKPLAN_SITE, else the current directory)' -r -F
complete -c rackplan -n "__fish_rackplan_using_subcommand plan" -l release -d 'Free the allocation of a node that left the inventory (repeatable)' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand plan" -l color -d 'Colour in diagnostics' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is not set'
always\t''
never\t''"
complete -c rackplan -n "__fish_rackplan_using_subcommand plan" -l output -d 'Output format' -r -f -a "table\t''
json\t''"
complete -c rackplan -n "__fish_rackplan_using_subcommand plan" -l wait-lock -d 'Seconds to wait for another rackplan writing the same site to finish (default: do not wait; say who holds the site and exit 2)' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand plan" -l dry-run -d 'Show the plan without writing allocations.yaml'
complete -c rackplan -n "__fish_rackplan_using_subcommand plan" -s q -l quiet -d 'Only errors on stderr: no progress bars, notes or warnings'
complete -c rackplan -n "__fish_rackplan_using_subcommand plan" -s v -l verbose -d 'More detail on stderr (-v info, -vv debug, -vvv trace); RUST_LOG overrides'
complete -c rackplan -n "__fish_rackplan_using_subcommand plan" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rackplan -n "__fish_rackplan_using_subcommand plan" -s V -l version -d 'Print version'
complete -c rackplan -n "__fish_rackplan_using_subcommand render" -l site -d 'Site directory holding site.yaml, nodes.yaml and allocations.yaml (default: RACKPLAN_SITE, else the current directory)' -r -F
complete -c rackplan -n "__fish_rackplan_using_subcommand render" -l out -d 'Output directory (default: iso-config/<site name> beside inventory/)' -r -F
complete -c rackplan -n "__fish_rackplan_using_subcommand render" -l color -d 'Colour in diagnostics' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is not set'
always\t''
never\t''"
complete -c rackplan -n "__fish_rackplan_using_subcommand render" -l output -d 'Output format' -r -f -a "table\t''
json\t''"
complete -c rackplan -n "__fish_rackplan_using_subcommand render" -l wait-lock -d 'Seconds to wait for another rackplan writing the same site to finish (default: do not wait; say who holds the site and exit 2)' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand render" -s q -l quiet -d 'Only errors on stderr: no progress bars, notes or warnings'
complete -c rackplan -n "__fish_rackplan_using_subcommand render" -s v -l verbose -d 'More detail on stderr (-v info, -vv debug, -vvv trace); RUST_LOG overrides'
complete -c rackplan -n "__fish_rackplan_using_subcommand render" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rackplan -n "__fish_rackplan_using_subcommand render" -s V -l version -d 'Print version'
complete -c rackplan -n "__fish_rackplan_using_subcommand simulate" -l from-cluster -d 'Start from the fleet as it runs: kubectl -o yaml/json output (a file or a folder) or a Harvester support bundle (.zip or unpacked). Its settings win over the scenario\'s' -r -F
complete -c rackplan -n "__fish_rackplan_using_subcommand simulate" -l drain -d 'With --from-cluster: can these nodes go into maintenance now (NODE[,NODE]). It answers that question alone: no review report, charts or rebuild what-if' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand simulate" -l order -d 'With --upgrade: the nodes in this order (NODE[,NODE]); nodes left out follow in Harvester\'s order' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand simulate" -l report -d 'Write the review report: review.html (one self-contained file) or review.md (with its SVG charts beside it)' -r -F
complete -c rackplan -n "__fish_rackplan_using_subcommand simulate" -l site -d 'The fleet is this site\'s nodes (nodes.yaml and its role profiles) instead of the scenario\'s node classes; with no scenario given, the site\'s own scenario.yaml (which `rackplan init` writes) is simulated' -r -F
complete -c rackplan -n "__fish_rackplan_using_subcommand simulate" -l plot -d 'Write SVG charts into this directory' -r -F
complete -c rackplan -n "__fish_rackplan_using_subcommand simulate" -l rebuild-data -d 'Rebuild what-if: the failed node holds this much replica data (15TiB, 8TB, 500GiB)' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand simulate" -l rebuild-node -d 'Rebuild what-if: the host that fails (default: the first of the largest class)' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand simulate" -l budget -d 'Seconds the review may take before max clusters stops and answers "at least N" (every count it checked passes; JSON `lower_bound: true`) and the timeline stops after the months it checked. Ctrl-C stops them the same way (again: quit). Default: no limit' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand simulate" -l color -d 'Colour in diagnostics' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is not set'
always\t''
never\t''"
complete -c rackplan -n "__fish_rackplan_using_subcommand simulate" -l output -d 'Output format' -r -f -a "table\t''
json\t''"
complete -c rackplan -n "__fish_rackplan_using_subcommand simulate" -l wait-lock -d 'Seconds to wait for another rackplan writing the same site to finish (default: do not wait; say who holds the site and exit 2)' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand simulate" -l upgrade -d 'The rolling upgrade: every node through maintenance one at a time, in Harvester\'s order (or --order): each VM\'s move or stop, each volume\'s fate, the window, the blockers and a better order. Exit 0 when it completes cleanly. With --report the review report gains its section and timeline chart'
complete -c rackplan -n "__fish_rackplan_using_subcommand simulate" -s q -l quiet -d 'Only errors on stderr: no progress bars, notes or warnings'
complete -c rackplan -n "__fish_rackplan_using_subcommand simulate" -s v -l verbose -d 'More detail on stderr (-v info, -vv debug, -vvv trace); RUST_LOG overrides'
complete -c rackplan -n "__fish_rackplan_using_subcommand simulate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rackplan -n "__fish_rackplan_using_subcommand simulate" -s V -l version -d 'Print version'
complete -c rackplan -n "__fish_rackplan_using_subcommand admit" -l site -d 'The fleet is this site\'s nodes (nodes.yaml and its role profiles) instead of the scenario\'s node classes' -r -F
complete -c rackplan -n "__fish_rackplan_using_subcommand admit" -l from-cluster -d 'Judge the request on the fleet as it runs: a kubectl dump or a support bundle (its Nodes, VMs, volumes and settings replace the scenario\'s fleet and clusters)' -r -F
complete -c rackplan -n "__fish_rackplan_using_subcommand admit" -l at -d 'Judge the request at this date (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ); default now' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand admit" -l color -d 'Colour in diagnostics' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is not set'
always\t''
never\t''"
complete -c rackplan -n "__fish_rackplan_using_subcommand admit" -l output -d 'Output format' -r -f -a "table\t''
json\t''"
complete -c rackplan -n "__fish_rackplan_using_subcommand admit" -l wait-lock -d 'Seconds to wait for another rackplan writing the same site to finish (default: do not wait; say who holds the site and exit 2)' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand admit" -s q -l quiet -d 'Only errors on stderr: no progress bars, notes or warnings'
complete -c rackplan -n "__fish_rackplan_using_subcommand admit" -s v -l verbose -d 'More detail on stderr (-v info, -vv debug, -vvv trace); RUST_LOG overrides'
complete -c rackplan -n "__fish_rackplan_using_subcommand admit" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rackplan -n "__fish_rackplan_using_subcommand admit" -s V -l version -d 'Print version'
complete -c rackplan -n "__fish_rackplan_using_subcommand docs" -l out -d 'Folder to write into' -r -F
complete -c rackplan -n "__fish_rackplan_using_subcommand docs" -l color -d 'Colour in diagnostics' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is not set'
always\t''
never\t''"
complete -c rackplan -n "__fish_rackplan_using_subcommand docs" -l output -d 'Output format' -r -f -a "table\t''
json\t''"
complete -c rackplan -n "__fish_rackplan_using_subcommand docs" -l wait-lock -d 'Seconds to wait for another rackplan writing the same site to finish (default: do not wait; say who holds the site and exit 2)' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand docs" -l check -d 'Write nothing; exit 1 if any file differs from what the code generates'
complete -c rackplan -n "__fish_rackplan_using_subcommand docs" -s q -l quiet -d 'Only errors on stderr: no progress bars, notes or warnings'
complete -c rackplan -n "__fish_rackplan_using_subcommand docs" -s v -l verbose -d 'More detail on stderr (-v info, -vv debug, -vvv trace); RUST_LOG overrides'
complete -c rackplan -n "__fish_rackplan_using_subcommand docs" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rackplan -n "__fish_rackplan_using_subcommand docs" -s V -l version -d 'Print version'
complete -c rackplan -n "__fish_rackplan_using_subcommand completions" -l color -d 'Colour in diagnostics' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is not set'
always\t''
never\t''"
complete -c rackplan -n "__fish_rackplan_using_subcommand completions" -l output -d 'Output format' -r -f -a "table\t''
json\t''"
complete -c rackplan -n "__fish_rackplan_using_subcommand completions" -l wait-lock -d 'Seconds to wait for another rackplan writing the same site to finish (default: do not wait; say who holds the site and exit 2)' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand completions" -s q -l quiet -d 'Only errors on stderr: no progress bars, notes or warnings'
complete -c rackplan -n "__fish_rackplan_using_subcommand completions" -s v -l verbose -d 'More detail on stderr (-v info, -vv debug, -vvv trace); RUST_LOG overrides'
complete -c rackplan -n "__fish_rackplan_using_subcommand completions" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rackplan -n "__fish_rackplan_using_subcommand completions" -s V -l version -d 'Print version'
complete -c rackplan -n "__fish_rackplan_using_subcommand status" -l site -d 'Site directory holding site.yaml, nodes.yaml and allocations.yaml (default: RACKPLAN_SITE, else the current directory)' -r -F
complete -c rackplan -n "__fish_rackplan_using_subcommand status" -l url -d 'Ask the server at this base URL instead of reading the site\'s state file' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand status" -l interval -d 'Seconds between polls with --watch' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand status" -l count -d 'Stop after this many polls with --watch' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand status" -l color -d 'Colour in diagnostics' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is not set'
always\t''
never\t''"
complete -c rackplan -n "__fish_rackplan_using_subcommand status" -l output -d 'Output format' -r -f -a "table\t''
json\t''"
complete -c rackplan -n "__fish_rackplan_using_subcommand status" -l wait-lock -d 'Seconds to wait for another rackplan writing the same site to finish (default: do not wait; say who holds the site and exit 2)' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand status" -l watch -d 'Poll until every node is installed or failed (or --count polls)'
complete -c rackplan -n "__fish_rackplan_using_subcommand status" -s q -l quiet -d 'Only errors on stderr: no progress bars, notes or warnings'
complete -c rackplan -n "__fish_rackplan_using_subcommand status" -s v -l verbose -d 'More detail on stderr (-v info, -vv debug, -vvv trace); RUST_LOG overrides'
complete -c rackplan -n "__fish_rackplan_using_subcommand status" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rackplan -n "__fish_rackplan_using_subcommand status" -s V -l version -d 'Print version'
complete -c rackplan -n "__fish_rackplan_using_subcommand serve" -l site -d 'Site directory holding site.yaml, nodes.yaml and allocations.yaml (default: RACKPLAN_SITE, else the current directory)' -r -F
complete -c rackplan -n "__fish_rackplan_using_subcommand serve" -l listen -d 'Address to listen on (default: serve.listen of site.yaml, else 127.0.0.1:8080; port 0 picks a free one)' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand serve" -l base-url -d 'The URL nodes reach this server at (default: harvester.pxe_base_url of site.yaml)' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand serve" -l artifacts -d 'Folder with the installer\'s kernel, initrd, rootfs and ISO, served as they are (refused if it holds rendered install configs)' -r -F
complete -c rackplan -n "__fish_rackplan_using_subcommand serve" -l reinstall -d 'Hand a fresh config token to this node (hostname or id) even though its install already SUCCEEDED (repeatable). Without it, an installed node is told to boot its disk, also after a restart (DIR/install-state.yaml keeps each node\'s progress)' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand serve" -l color -d 'Colour in diagnostics' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is not set'
always\t''
never\t''"
complete -c rackplan -n "__fish_rackplan_using_subcommand serve" -l output -d 'Output format' -r -f -a "table\t''
json\t''"
complete -c rackplan -n "__fish_rackplan_using_subcommand serve" -l wait-lock -d 'Seconds to wait for another rackplan writing the same site to finish (default: do not wait; say who holds the site and exit 2)' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand serve" -s q -l quiet -d 'Only errors on stderr: no progress bars, notes or warnings'
complete -c rackplan -n "__fish_rackplan_using_subcommand serve" -s v -l verbose -d 'More detail on stderr (-v info, -vv debug, -vvv trace); RUST_LOG overrides'
complete -c rackplan -n "__fish_rackplan_using_subcommand serve" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rackplan -n "__fish_rackplan_using_subcommand serve" -s V -l version -d 'Print version'
complete -c rackplan -n "__fish_rackplan_using_subcommand operator" -l catalogue -d 'The rendered catalogue folder (`catalogue/` of `rackplan render`): the shapes requests may ask for, and the Rancher objects delivered for them' -r -F
complete -c rackplan -n "__fish_rackplan_using_subcommand operator" -l scenario -d 'The scenario with the teams and their vCPU quotas (the site\'s `catalogue.scenario`), the headroom rules and platform defaults; the fleet is read from Harvester' -r -F
complete -c rackplan -n "__fish_rackplan_using_subcommand operator" -l quotas -d 'A ConfigMap (in --namespace) mapping team to vCPU quota, read at every judgement, over the scenario\'s quotas' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand operator" -l kubeconfig -d 'Kubeconfig of Rancher\'s cluster (requests, Rancher Clusters, events, the lease); default: KUBECONFIG, else the in-cluster service account' -r -F
complete -c rackplan -n "__fish_rackplan_using_subcommand operator" -l harvester-kubeconfig -d 'Kubeconfig of the Harvester cluster the fleet is read from; default: Rancher\'s' -r -F
complete -c rackplan -n "__fish_rackplan_using_subcommand operator" -l namespace -d 'Namespace of the Rancher clusters, the quota ConfigMap and the Lease; default: the catalogue\'s' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand operator" -l team-namespaces -d 'Label selector of the team namespaces where requests are made; each must also carry `rackplan.io/team: <team>` (its team), which only the platform team sets' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand operator" -l rancher-url -d 'Rancher\'s address, for the access instructions written on each ready request (`https://rancher.example.com`)' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand operator" -l snapshot-timeout -d 'How long the final etcd snapshot of an expiring cluster is waited for before the cluster is deleted without it' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand operator" -l delivery-target -d 'The delivery promise: a request not Ready this long after its admission is marked `DeliveryLate` (default: the scenario\'s `delivery:` target for the shape, else 15m)' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand operator" -l warn-before -d 'Warn (an event, phase Expiring) this long before a cluster expires' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand operator" -l max-lifetime -d 'The longest lifetime a request is granted, counted from its admission, extensions included (a team\'s own `max_lifetime` overrides it)' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand operator" -l allow-version -d 'A Kubernetes version requests may ask for besides the catalogue\'s (repeatable)' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand operator" -l listen -d 'Address of /metrics and /healthz (port 0 picks a free one)' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand operator" -l lease-seconds -d 'Seconds a leader\'s lease lasts without renewal' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand operator" -l resync-seconds -d 'Longest time in seconds between two looks at a request' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand operator" -l clock-file -d 'Read "now" from this file (an RFC 3339 time) at every look: to rehearse expiries (a new time is seen at the next look, --resync-seconds at the latest)' -r -F
complete -c rackplan -n "__fish_rackplan_using_subcommand operator" -l identity -d 'This replica\'s name in the lease and on events; default: POD_NAME, else hostname-pid' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand operator" -l color -d 'Colour in diagnostics' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is not set'
always\t''
never\t''"
complete -c rackplan -n "__fish_rackplan_using_subcommand operator" -l output -d 'Output format' -r -f -a "table\t''
json\t''"
complete -c rackplan -n "__fish_rackplan_using_subcommand operator" -l wait-lock -d 'Seconds to wait for another rackplan writing the same site to finish (default: do not wait; say who holds the site and exit 2)' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand operator" -l dry-run -d 'Write status only: create no cluster, delete none, add no finalizer'
complete -c rackplan -n "__fish_rackplan_using_subcommand operator" -l no-leader-election -d 'Act without holding the lease (one replica only)'
complete -c rackplan -n "__fish_rackplan_using_subcommand operator" -s q -l quiet -d 'Only errors on stderr: no progress bars, notes or warnings'
complete -c rackplan -n "__fish_rackplan_using_subcommand operator" -s v -l verbose -d 'More detail on stderr (-v info, -vv debug, -vvv trace); RUST_LOG overrides'
complete -c rackplan -n "__fish_rackplan_using_subcommand operator" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rackplan -n "__fish_rackplan_using_subcommand operator" -s V -l version -d 'Print version'
complete -c rackplan -n "__fish_rackplan_using_subcommand portal" -l catalogue -d 'The rendered catalogue folder the operator delivers from' -r -F
complete -c rackplan -n "__fish_rackplan_using_subcommand portal" -l scenario -d 'The scenario the operator judges with (teams, quotas, headroom rules)' -r -F
complete -c rackplan -n "__fish_rackplan_using_subcommand portal" -l quotas -d 'The operator\'s quota ConfigMap (in --namespace), over the scenario\'s quotas' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand portal" -l kubeconfig -d 'Kubeconfig of Rancher\'s cluster: its server and CA serve every user\'s calls (made with the user\'s token); its identity only reads what a check reads. Default: KUBECONFIG, else the in-cluster service account' -r -F
complete -c rackplan -n "__fish_rackplan_using_subcommand portal" -l harvester-kubeconfig -d 'Kubeconfig of the Harvester cluster a check reads the fleet from; default: Rancher\'s' -r -F
complete -c rackplan -n "__fish_rackplan_using_subcommand portal" -l namespace -d 'Namespace of the quota ConfigMap; default: the catalogue\'s' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand portal" -l team-namespaces -d 'Label selector of the team namespaces (as given to the operator)' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand portal" -l max-lifetime -d 'The operator\'s --max-lifetime' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand portal" -l allow-version -d 'The operator\'s --allow-version (repeatable)' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand portal" -l delivery-target -d 'The operator\'s --delivery-target' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand portal" -l listen -d 'Address to serve on (plain HTTP: put it behind TLS; port 0 picks a free one)' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand portal" -l session -d 'How long a sign-in lasts' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand portal" -l clock-file -d 'Read "now" from this file (the operator\'s --clock-file)' -r -F
complete -c rackplan -n "__fish_rackplan_using_subcommand portal" -l proxy-user-header -d 'Sign-in by an authenticating proxy instead of a token: the header in which it names the user (`X-Forwarded-User`). The portal must be reachable only through the proxy, and the proxy must replace this header, never pass on a client\'s' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand portal" -l proxy-groups-header -d 'The proxy\'s header of comma-separated groups (`X-Forwarded-Groups`)' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand portal" -l impersonator-kubeconfig -d 'With --proxy-user-header: the kubeconfig of a service account that may impersonate users and groups and nothing else; every call is made as the proxy\'s user through it' -r -F
complete -c rackplan -n "__fish_rackplan_using_subcommand portal" -l color -d 'Colour in diagnostics' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is not set'
always\t''
never\t''"
complete -c rackplan -n "__fish_rackplan_using_subcommand portal" -l output -d 'Output format' -r -f -a "table\t''
json\t''"
complete -c rackplan -n "__fish_rackplan_using_subcommand portal" -l wait-lock -d 'Seconds to wait for another rackplan writing the same site to finish (default: do not wait; say who holds the site and exit 2)' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand portal" -s q -l quiet -d 'Only errors on stderr: no progress bars, notes or warnings'
complete -c rackplan -n "__fish_rackplan_using_subcommand portal" -s v -l verbose -d 'More detail on stderr (-v info, -vv debug, -vvv trace); RUST_LOG overrides'
complete -c rackplan -n "__fish_rackplan_using_subcommand portal" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rackplan -n "__fish_rackplan_using_subcommand portal" -s V -l version -d 'Print version'
complete -c rackplan -n "__fish_rackplan_using_subcommand boot" -l site -d 'Site directory holding site.yaml, nodes.yaml and allocations.yaml (default: RACKPLAN_SITE, else the current directory)' -r -F
complete -c rackplan -n "__fish_rackplan_using_subcommand boot" -l node -d 'Node id or hostname (repeatable)' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand boot" -l iso -d 'Installer ISO URL (default: harvester.iso_url of site.yaml)' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand boot" -l wait -d 'Seconds to wait for the node to report power on after the reset' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand boot" -l color -d 'Colour in diagnostics' -r -f -a "auto\t'Colour when stderr is a terminal and NO_COLOR is not set'
always\t''
never\t''"
complete -c rackplan -n "__fish_rackplan_using_subcommand boot" -l output -d 'Output format' -r -f -a "table\t''
json\t''"
complete -c rackplan -n "__fish_rackplan_using_subcommand boot" -l wait-lock -d 'Seconds to wait for another rackplan writing the same site to finish (default: do not wait; say who holds the site and exit 2)' -r
complete -c rackplan -n "__fish_rackplan_using_subcommand boot" -l all -d 'Every node of the inventory that has a BMC'
complete -c rackplan -n "__fish_rackplan_using_subcommand boot" -l yes -d 'Carry out the plan (without it, only the requests are printed)'
complete -c rackplan -n "__fish_rackplan_using_subcommand boot" -l eject -d 'Eject the ISO and clear the boot override instead of booting'
complete -c rackplan -n "__fish_rackplan_using_subcommand boot" -l bios -d 'Write the BIOS attributes `check` names (virtualization, boot mode, IOMMU, SR-IOV as the role\'s profile asks) to the pending BIOS settings instead of booting; read them back. Applied at the next reset'
complete -c rackplan -n "__fish_rackplan_using_subcommand boot" -l force -d 'Boot nodes even if they are not planned, not rendered or have error findings (the output records that the gate was overridden)'
complete -c rackplan -n "__fish_rackplan_using_subcommand boot" -l restart-running -d 'Restart a host that is powered on (without it, a running host is left alone)'
complete -c rackplan -n "__fish_rackplan_using_subcommand boot" -s q -l quiet -d 'Only errors on stderr: no progress bars, notes or warnings'
complete -c rackplan -n "__fish_rackplan_using_subcommand boot" -s v -l verbose -d 'More detail on stderr (-v info, -vv debug, -vvv trace); RUST_LOG overrides'
complete -c rackplan -n "__fish_rackplan_using_subcommand boot" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rackplan -n "__fish_rackplan_using_subcommand boot" -s V -l version -d 'Print version'
complete -c rackplan -n "__fish_rackplan_using_subcommand help; and not __fish_seen_subcommand_from init discover check plan render simulate admit docs completions status serve operator portal boot help" -f -a "init" -d 'Start a site: site.yaml with every key, bmcs.yaml, profiles and schemas beside it; with --from, profiles derived from a discovered inventory'
complete -c rackplan -n "__fish_rackplan_using_subcommand help; and not __fish_seen_subcommand_from init discover check plan render simulate admit docs completions status serve operator portal boot help" -f -a "discover" -d 'Inventory servers from their BMCs (Redfish) or over SSH into nodes.yaml'
complete -c rackplan -n "__fish_rackplan_using_subcommand help; and not __fish_seen_subcommand_from init discover check plan render simulate admit docs completions status serve operator portal boot help" -f -a "check" -d 'Hold every node against its role profile and the site; exit 1 on errors'
complete -c rackplan -n "__fish_rackplan_using_subcommand help; and not __fish_seen_subcommand_from init discover check plan render simulate admit docs completions status serve operator portal boot help" -f -a "plan" -d 'Assign roles, hostnames and addresses into allocations.yaml (the lock)'
complete -c rackplan -n "__fish_rackplan_using_subcommand help; and not __fish_seen_subcommand_from init discover check plan render simulate admit docs completions status serve operator portal boot help" -f -a "render" -d 'Write install configs, iPXE scripts and manifests into iso-config/<site>/'
complete -c rackplan -n "__fish_rackplan_using_subcommand help; and not __fish_seen_subcommand_from init discover check plan render simulate admit docs completions status serve operator portal boot help" -f -a "simulate" -d 'Capacity and failure simulation of a scenario'
complete -c rackplan -n "__fish_rackplan_using_subcommand help; and not __fish_seen_subcommand_from init discover check plan render simulate admit docs completions status serve operator portal boot help" -f -a "admit" -d 'Capacity gate for one cluster request: within the team\'s vCPU quota, and the fleet still survives every node and rack failure with it. Exit 0 admitted, 1 refused'
complete -c rackplan -n "__fish_rackplan_using_subcommand help; and not __fish_seen_subcommand_from init discover check plan render simulate admit docs completions status serve operator portal boot help" -f -a "docs" -d 'Write the reference generated from the code: JSON Schemas of every input file, a page per format and per command, shell completions and man pages'
complete -c rackplan -n "__fish_rackplan_using_subcommand help; and not __fish_seen_subcommand_from init discover check plan render simulate admit docs completions status serve operator portal boot help" -f -a "completions" -d 'Print a shell completion script (bash, zsh, fish, elvish, powershell)'
complete -c rackplan -n "__fish_rackplan_using_subcommand help; and not __fish_seen_subcommand_from init discover check plan render simulate admit docs completions status serve operator portal boot help" -f -a "status" -d 'Per-node install state, as `rackplan serve` records it in DIR/install-state.yaml (no server needed), or from a running server\'s /status with --url'
complete -c rackplan -n "__fish_rackplan_using_subcommand help; and not __fish_seen_subcommand_from init discover check plan render simulate admit docs completions status serve operator portal boot help" -f -a "serve" -d 'Serve iPXE scripts and install configs over HTTP for PXE installs'
complete -c rackplan -n "__fish_rackplan_using_subcommand help; and not __fish_seen_subcommand_from init discover check plan render simulate admit docs completions status serve operator portal boot help" -f -a "operator" -d 'Run the request operator: judge ClusterRequests against quota and failure headroom on the fleet as it runs, deliver admitted ones as Rancher clusters from the catalogue, and delete them when their lifetime is over'
complete -c rackplan -n "__fish_rackplan_using_subcommand help; and not __fish_seen_subcommand_from init discover check plan render simulate admit docs completions status serve operator portal boot help" -f -a "portal" -d 'Serve the teams\' self-service pages: the shapes a team may ask for, the operator\'s verdict before it asks, its requests followed to their access instructions. Every call is made with the signed-in user\'s own token'
complete -c rackplan -n "__fish_rackplan_using_subcommand help; and not __fish_seen_subcommand_from init discover check plan render simulate admit docs completions status serve operator portal boot help" -f -a "boot" -d 'Boot nodes into the installer over Redfish virtual media (prints the plan unless --yes)'
complete -c rackplan -n "__fish_rackplan_using_subcommand help; and not __fish_seen_subcommand_from init discover check plan render simulate admit docs completions status serve operator portal boot help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c rackplan -n "__fish_rackplan_using_subcommand help; and __fish_seen_subcommand_from discover" -f -a "redfish" -d 'Crawl the BMCs listed in bmcs.yaml into nodes.yaml'
complete -c rackplan -n "__fish_rackplan_using_subcommand help; and __fish_seen_subcommand_from discover" -f -a "ssh" -d 'Probe hosts over SSH (lsblk, ip, lscpu, ...) and merge with the BMC view'
