//! The operating systems a base can be built for, and their families: what `base create
//! --os` takes, what base.json records, and what a twin's node is matched by. Here, below
//! both the bases and the clones, so that each reads one definition.

/// The operating systems a base can be built for. Each belongs to one [`Family`], which
/// decides the builder: debootstrap, `dnf --installroot` or `zypper --root`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Os {
    Debian,
    Ubuntu,
    /// Red Hat Enterprise Linux 8 or 9.
    Rhel,
    /// Rocky Linux 8 or 9.
    Rocky,
    /// AlmaLinux 8 or 9.
    Almalinux,
    /// CentOS Stream 8 or 9.
    Centos,
    /// SUSE Linux Enterprise Server 15.
    Sles,
    /// openSUSE Leap 15.
    Opensuse,
}

/// How a family's root file systems are built and where its packages come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Debian,
    Rhel,
    Suse,
}

impl Os {
    pub fn as_str(self) -> &'static str {
        match self {
            Os::Debian => "debian",
            Os::Ubuntu => "ubuntu",
            Os::Rhel => "rhel",
            Os::Rocky => "rocky",
            Os::Almalinux => "almalinux",
            Os::Centos => "centos",
            Os::Sles => "sles",
            Os::Opensuse => "opensuse",
        }
    }

    pub fn family(self) -> Family {
        match self {
            Os::Debian | Os::Ubuntu => Family::Debian,
            Os::Rhel | Os::Rocky | Os::Almalinux | Os::Centos => Family::Rhel,
            Os::Sles | Os::Opensuse => Family::Suse,
        }
    }

    /// An os-release `ID` (or base.json's `os`) that names one of these exactly.
    pub fn from_id(id: &str) -> Option<Self> {
        match id {
            "debian" => Some(Os::Debian),
            "ubuntu" => Some(Os::Ubuntu),
            "rhel" => Some(Os::Rhel),
            "rocky" => Some(Os::Rocky),
            "almalinux" => Some(Os::Almalinux),
            "centos" => Some(Os::Centos),
            "sles" => Some(Os::Sles),
            "opensuse" | "opensuse-leap" => Some(Os::Opensuse),
            _ => None,
        }
    }

    /// The host's OS from os-release: `ID` when it names one of ours, else the first
    /// `ID_LIKE` entry that does (a derivative builds bases of its parent's family).
    pub fn of_host(id: Option<&str>, id_like: &[String]) -> Option<Self> {
        id.and_then(Os::from_id).or_else(|| {
            id_like.iter().find_map(|like| match like.as_str() {
                "fedora" => Some(Os::Rhel),
                "suse" => Some(Os::Opensuse),
                other => Os::from_id(other),
            })
        })
    }
}

impl Family {
    /// Facter's `os.family` of the family's systems, by which a twin's node is matched to
    /// a base.
    pub fn os_family_fact(self) -> &'static str {
        match self {
            Family::Debian => "Debian",
            Family::Rhel => "RedHat",
            Family::Suse => "Suse",
        }
    }
}
