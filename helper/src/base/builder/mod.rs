//! How a base's root file system is built, per OS family: the exact sequence of commands
//! (a pure function of the [`BuildSpec`], snapshot-tested) and the finishing steps.
//!
//! - Debian and Ubuntu: `debootstrap` (README, "Tested here", says which builders are run for real).
//! - RHEL, Rocky, AlmaLinux, CentOS Stream 8/9: `dnf --installroot` (untested here).
//! - SLES and openSUSE Leap 15: `zypper --root` (untested here).
//!
//! The agent then comes from the distribution (`distro`), from Puppet's or OpenVox's
//! repositories (`puppet`, `openvox`: the vendor's release package first, then the agent
//! from the repository it adds), or from a PE primary server (`pe`: its `install.bash`,
//! fetched with the server's CA verified and run inside the staging root).
//!
//! Commands that run inside the staging root use `systemd-nspawn --register=no
//! --keep-unit` (no machined, no system bus and no systemd as PID 1 needed on the host;
//! /proc, /dev and resolv.conf set up; /tmp is a fresh tmpfs there, so downloads go to
//! /root).
//! Downloads run on the host with `curl --proto =https`, TLS always verified: never `-k`.
//!
//! One file per installer ([`debootstrap`], [`dnf`], [`zypper`]), where the agent comes
//! from ([`agent`]), what a builder is given ([`spec`]), the command lines they share
//! ([`command`]), and what every base needs once built ([`finish`]).

pub mod agent;
pub mod command;
pub mod debootstrap;
pub mod dnf;
pub mod finish;
pub mod spec;
pub mod zypper;

pub use agent::release_package_url;
pub use spec::{BuildSpec, PeSpec, RootfsBuilder};

use super::{Family, Os};
use debootstrap::DebootstrapBuilder;
use dnf::DnfBuilder;
use zypper::ZypperBuilder;

/// The builder of `os`'s family.
pub fn builder_for(os: Os) -> Box<dyn RootfsBuilder> {
    match os.family() {
        Family::Debian => Box::new(DebootstrapBuilder),
        Family::Rhel => Box::new(DnfBuilder),
        Family::Suse => Box::new(ZypperBuilder),
    }
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;

    use super::finish::{finish_rootfs, JOURNALD_DROPIN};
    use super::spec::Argv;
    use super::*;
    use crate::base::PuppetSource;

    const STAGING: &str = "/var/lib/puppet-clone-army/.staging-b1";

    fn spec(os: Os, release: &str, mirror: &str, source: PuppetSource) -> BuildSpec {
        BuildSpec {
            os,
            release: release.into(),
            mirror: mirror.into(),
            puppet_source: source,
            pe: (source == PuppetSource::Pe).then(|| PeSpec {
                server: "pe-primary.example.com".into(),
                ca_cert: "/root/pe-ca.pem".into(),
            }),
        }
    }

    fn commands(spec: &BuildSpec) -> Vec<Argv> {
        builder_for(spec.os)
            .commands(spec, Path::new(STAGING))
            .unwrap()
    }

    /// The exact command sequence of every builder × puppet source that makes sense,
    /// one snapshot each. Only Debian + distro runs for real on this project's machines.
    #[test]
    fn command_sequences() {
        use PuppetSource::*;
        let debian = "http://deb.debian.org/debian";
        let ubuntu = "http://archive.ubuntu.com/ubuntu";
        let leap = "http://download.opensuse.org/distribution/leap/15.6/repo/oss/";
        let sles =
            "https://rmt.example.com/repo/SUSE/Products/SLE-Product-SLES/15-SP6/x86_64/product/";
        let cases = [
            (
                "debian_bookworm_distro",
                spec(Os::Debian, "bookworm", debian, Distro),
            ),
            (
                "debian_bookworm_puppet",
                spec(Os::Debian, "bookworm", debian, Puppet),
            ),
            (
                "debian_bookworm_openvox",
                spec(Os::Debian, "bookworm", debian, Openvox),
            ),
            (
                "debian_bookworm_pe",
                spec(Os::Debian, "bookworm", debian, Pe),
            ),
            (
                "ubuntu_noble_distro",
                spec(Os::Ubuntu, "noble", ubuntu, Distro),
            ),
            (
                "ubuntu_jammy_distro",
                spec(Os::Ubuntu, "jammy", ubuntu, Distro),
            ),
            (
                "ubuntu_noble_puppet",
                spec(Os::Ubuntu, "noble", ubuntu, Puppet),
            ),
            (
                "ubuntu_noble_openvox",
                spec(Os::Ubuntu, "noble", ubuntu, Openvox),
            ),
            ("ubuntu_noble_pe", spec(Os::Ubuntu, "noble", ubuntu, Pe)),
            ("rocky_9_puppet", spec(Os::Rocky, "9", "", Puppet)),
            ("rocky_9_openvox", spec(Os::Rocky, "9", "", Openvox)),
            ("almalinux_8_openvox", spec(Os::Almalinux, "8", "", Openvox)),
            ("rhel_9_puppet", spec(Os::Rhel, "9", "", Puppet)),
            ("centos_9_openvox", spec(Os::Centos, "9", "", Openvox)),
            ("rhel_9_pe", spec(Os::Rhel, "9", "", Pe)),
            (
                "opensuse_15_6_puppet",
                spec(Os::Opensuse, "15.6", leap, Puppet),
            ),
            (
                "opensuse_15_6_openvox",
                spec(Os::Opensuse, "15.6", leap, Openvox),
            ),
            ("sles_15_6_openvox", spec(Os::Sles, "15.6", sles, Openvox)),
            ("sles_15_6_pe", spec(Os::Sles, "15.6", sles, Pe)),
        ];
        for (name, spec) in cases {
            let rendered: Vec<String> = commands(&spec).iter().map(|a| a.join(" ")).collect();
            insta::assert_debug_snapshot!(name, rendered);
        }
    }

    /// What a person sees of each step on a build's status line: the program (inside the
    /// root, the one run there), with the package tools' subcommand.
    #[test]
    fn steps_are_named_by_what_they_run() {
        use PuppetSource::*;
        let names = |spec: &BuildSpec| -> Vec<String> {
            commands(spec)
                .iter()
                .map(|a| command::step_name(a))
                .collect()
        };
        let debian = "http://deb.debian.org/debian";
        assert_eq!(
            names(&spec(Os::Debian, "bookworm", debian, Puppet)),
            [
                "debootstrap",
                "curl",
                "dpkg",
                "apt-get update",
                "apt-get install",
                "apt-get clean",
                "rm"
            ]
        );
        assert_eq!(
            names(&spec(Os::Rhel, "9", "", Pe)),
            ["dnf install", "curl", "install", "bash", "rm", "dnf clean"]
        );
        let leap = "http://download.opensuse.org/distribution/leap/15.6/repo/oss/";
        assert_eq!(
            names(&spec(Os::Opensuse, "15.6", leap, Openvox))[..4],
            ["sh", "zypper addrepo", "zypper refresh", "zypper install"]
        );
        assert_eq!(command::step_name(&[]), "");
    }

    #[test]
    fn debian_distro_is_one_debootstrap_call() {
        let all = commands(&spec(
            Os::Debian,
            "bookworm",
            "http://deb.debian.org/debian",
            PuppetSource::Distro,
        ));
        assert_eq!(all.len(), 1);
        assert_eq!(
            all[0],
            [
                "debootstrap",
                "--variant=minbase",
                "--include=systemd,systemd-sysv,dbus,ca-certificates,procps,puppet-agent",
                "--components=main",
                "--keyring=/usr/share/keyrings/debian-archive-keyring.gpg",
                "--force-check-gpg",
                "bookworm",
                STAGING,
                "http://deb.debian.org/debian",
            ]
        );
    }

    /// Every package of every base is verified: debootstrap fails without a signature,
    /// and no key is ever taken on trust from a repository.
    #[test]
    fn no_build_takes_packages_or_keys_on_trust() {
        for (os, release) in [
            (Os::Debian, "bookworm"),
            (Os::Ubuntu, "noble"),
            (Os::Rocky, "9"),
            (Os::Sles, "15.6"),
            (Os::Opensuse, "15.6"),
        ] {
            for source in [
                PuppetSource::Puppet,
                PuppetSource::Openvox,
                PuppetSource::Pe,
            ] {
                for argv in commands(&spec(os, release, "https://m.example/", source)) {
                    assert!(
                        !argv.iter().any(|a| a.contains("auto-import")
                            || a == "--allow-unauthenticated"
                            || a == "--no-check-gpg"
                            || a == "--nogpgcheck"),
                        "{argv:?}"
                    );
                    if argv[0] == "debootstrap" {
                        assert!(argv.contains(&"--force-check-gpg".to_owned()), "{argv:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn ubuntu_gets_universe_for_the_agent() {
        let all = commands(&spec(
            Os::Ubuntu,
            "noble",
            "http://archive.ubuntu.com/ubuntu",
            PuppetSource::Distro,
        ));
        assert!(all[0].contains(&"--components=main,universe".to_owned()));
        assert!(
            all[0].contains(&"--keyring=/usr/share/keyrings/ubuntu-archive-keyring.gpg".to_owned())
        );
        assert!(all[0].contains(&"--force-check-gpg".to_owned()));
        assert!(all[0][2].ends_with(",puppet-agent"));
    }

    #[test]
    fn pe_verifies_the_servers_ca_and_never_skips_tls() {
        for os in [Os::Debian, Os::Rocky, Os::Sles] {
            let all = commands(&spec(os, "9", "http://m.example/", PuppetSource::Pe));
            let fetch = all
                .iter()
                .find(|a| a[0] == "curl")
                .expect("a download of install.bash");
            assert!(fetch
                .windows(2)
                .any(|w| w[0] == "--cacert" && w[1] == "/root/pe-ca.pem"));
            assert_eq!(
                fetch.last().unwrap(),
                "https://pe-primary.example.com:8140/packages/current/install.bash"
            );
            for argv in &all {
                assert!(
                    !argv.iter().any(|a| a == "-k" || a == "--insecure"),
                    "{argv:?}"
                );
            }
            let run = all.iter().find(|a| a[0] == "systemd-nspawn").unwrap();
            assert!(run.ends_with(&[
                "--puppet-service-ensure".to_owned(),
                "stopped".to_owned(),
                "--puppet-service-enable".to_owned(),
                "false".to_owned()
            ]));
        }
    }

    #[test]
    fn distro_is_refused_where_there_is_no_agent_package() {
        for os in [Os::Rocky, Os::Opensuse] {
            let error = builder_for(os)
                .commands(
                    &spec(os, "9", "http://m.example/", PuppetSource::Distro),
                    Path::new(STAGING),
                )
                .unwrap_err();
            assert_eq!(error.field(), Some("puppet-source"));
        }
        let error = release_package_url(&spec(
            Os::Debian,
            "sid",
            "http://m.example/",
            PuppetSource::Openvox,
        ))
        .unwrap_err();
        assert_eq!(error.field(), Some("release"));
    }

    #[test]
    fn finishing_a_rootfs() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("rootfs");
        fs::create_dir(&root).unwrap();
        fs::set_permissions(&root, fs::Permissions::from_mode(0o700)).unwrap();
        for dir in ["etc", "usr", "var"] {
            fs::create_dir_all(root.join(dir)).unwrap();
        }
        fs::write(root.join("etc/machine-id"), "0123456789abcdef\n").unwrap();
        fs::write(
            root.join("etc/shadow"),
            "root:$6$hash:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n",
        )
        .unwrap();
        fs::set_permissions(root.join("etc/shadow"), fs::Permissions::from_mode(0o640)).unwrap();
        fs::create_dir_all(root.join("var/lib/puppet/ssl/certs")).unwrap();
        // An AIO agent's SSL dir: only the CA the PE build put there stays.
        let aio_ssl = root.join("etc/puppetlabs/puppet/ssl");
        fs::create_dir_all(aio_ssl.join("certs")).unwrap();
        fs::create_dir_all(aio_ssl.join("private_keys")).unwrap();
        fs::write(aio_ssl.join("certs/ca.pem"), "CA\n").unwrap();
        fs::write(aio_ssl.join("private_keys/base.pem"), "KEY\n").unwrap();
        fs::create_dir_all(root.join("lib/systemd/system")).unwrap();
        fs::write(
            root.join("lib/systemd/system/puppet.service"),
            "[Service]\nExecStart=/usr/bin/puppet agent\n[Install]\nWantedBy=multi-user.target\n",
        )
        .unwrap();

        finish_rootfs(&root).unwrap();

        assert_eq!(fs::metadata(&root).unwrap().mode() & 0o7777, 0o755);
        assert_eq!(fs::read(root.join("etc/machine-id")).unwrap(), b"");
        let shadow = fs::read_to_string(root.join("etc/shadow")).unwrap();
        assert!(shadow.starts_with("root:*:19000:"), "{shadow}");
        assert!(shadow.contains("daemon:*:"));
        assert!(!root.join("var/lib/puppet/ssl").exists());
        assert_eq!(
            fs::read_to_string(aio_ssl.join("certs/ca.pem")).unwrap(),
            "CA\n"
        );
        assert!(!aio_ssl.join("private_keys").exists());
        assert_eq!(
            fs::metadata(root.join("etc/shadow")).unwrap().mode() & 0o7777,
            0o640
        );
        assert_eq!(
            fs::read_link(root.join("etc/systemd/system/multi-user.target.wants/puppet.service"))
                .unwrap(),
            Path::new("/lib/systemd/system/puppet.service")
        );
        let journald = fs::read_to_string(root.join(JOURNALD_DROPIN)).unwrap();
        assert!(crate::systemd::units::is_ours(&journald), "{journald}");
        assert!(
            journald
                .ends_with("[Journal]\nSystemMaxUse=8M\nSystemMaxFileSize=2M\nRuntimeMaxUse=4M\n"),
            "{journald}"
        );
        assert_eq!(
            fs::metadata(root.join(JOURNALD_DROPIN)).unwrap().mode() & 0o7777,
            0o644
        );
        // Facter's fact cache is on (its content: base::fact_cache's snapshots).
        let facter_conf = fs::read_to_string(root.join("etc/facter/facter.conf")).unwrap();
        assert!(facter_conf.contains("ttls"), "{facter_conf}");
        let usr_time = fs::metadata(root.join("usr")).unwrap().modified().unwrap();
        for stamp in ["etc/.updated", "var/.updated"] {
            let time = fs::metadata(root.join(stamp)).unwrap().modified().unwrap();
            assert_eq!(time, usr_time, "{stamp}");
        }
    }

    #[test]
    fn a_rootfs_without_the_agent_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let error = finish_rootfs(dir.path()).unwrap_err();
        assert!(error.to_string().contains("puppet.service"), "{error}");
    }
}
