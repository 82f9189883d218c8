# frozen_string_literal: true

require_relative 'spec_helper_acceptance'

# Facter's fact cache in the clones (helper/src/base/fact_cache.rs) makes an
# agent run cheaper without changing what the server gets. A clone's run with
# the cache turned off (facter.conf set aside, as a base without it runs) is
# compared with its runs with the cache on, the second of which reads the
# cached groups: the facts the server stored for the clone after each
# (the YAML copy its facts route keeps beside PuppetDB) have the same names,
# the same values for every cached group, and the clone's own name and host
# name, not the base's or another clone's.
# It applies the class with two manual clones of its own, so it runs after
# clone_army_spec.rb, whose first examples need a host the class has never
# been applied to (the files run in name order, on one sandbox host).
RSpec.describe 'Facter fact cache in the clones' do
  clones = ['clone1', 'clone2'].freeze
  # Debian's Facter reads this (the AIO agents' is under /etc/puppetlabs).
  facter_conf = '/etc/facter/facter.conf'
  cache_dir = '/var/cache/facter/facts'
  # The groups fact_cache.rs caches on a dpkg base, as Facter names their files,
  # and the top-level facts each holds that a container has.
  cached_groups = {
    'augeas' => ['augeas'],
    'kernel' => ['kernel', 'kernelrelease', 'kernelversion', 'kernelmajversion'],
    'processor' => ['processors'],
  }.freeze
  # Facts whose values move from run to run (Puppet 7's legacy ones too:
  # memoryfree_mb, swapfree, uptime_seconds, ...); their names must still match.
  moving = %r{\A(memory|swap|system_uptime|uptime|load_averages|mountpoints)}
  apply_timeout = Integer(ENV.fetch('FIRST_APPLY_TIMEOUT', 1200))

  # Not a let: the before(:all) below needs them.
  define_method(:certnames) { clones.map { |c| "#{c}.#{host_certname}" } }

  # The facts the server stored for certname at its last catalog request,
  # flattened to "a.b.c" => leaf value: the YAML copy the PuppetDB facts route
  # caches under the server's yamldir. A server without PuppetDB (Debian 12's
  # sandbox) keeps no copy of the facts it was sent.
  def stored_facts(certname)
    script = <<~'SH'
      f=$(find /var/lib/puppetserver /var/lib/puppet /var/cache/puppet /var/cache/puppetserver \
            -path "*/yaml/facts/$1.yaml" 2>/dev/null | head -n 1)
      [ -n "$f" ] || { echo "no stored facts for $1" >&2; exit 1; }
      exec ruby -rpuppet -ryaml -rjson -e 'puts JSON.generate(YAML.unsafe_load_file(ARGV[0]).values)' "$f"
    SH
    flatten(JSON.parse(on_sandbox!('sh', '-c', script, 'sh', certname, timeout: 60).stdout))
  end

  def flatten(value, prefix = nil)
    return { prefix => value } unless value.is_a?(Hash)

    value.flat_map { |k, v| flatten(v, prefix ? "#{prefix}.#{k}" : k.to_s).to_a }.to_h
  end

  # One agent run in clone, bounded at 5 minutes (a compile on a busy host included).
  def agent_run!(clone)
    result = in_clone(clone, *SandboxHarness::AGENT_RUN, '--color=false', timeout: 300)
    # 0 or 2 (--detailed-exitcodes in -t): no failure.
    raise "agent run in #{clone}: #{result}" unless [0, 2].include?(result.exitstatus)

    result
  end

  # clone1's cache files (read from the host, in its upper layer): name => mtime.
  define_method(:cache_files) do
    out = on_sandbox('sh', '-c', 'cd "$1" 2>/dev/null && stat -c "%Y %n" -- *', 'sh',
                     "/var/lib/puppet-clone-army/clone1-overlay#{cache_dir}", timeout: 30).stdout
    out.lines.to_h { |l| l.chomp.split(' ', 2).reverse }.transform_values(&:to_i)
  end

  def in_clone!(clone, *argv)
    result = in_clone(clone, *argv)
    raise "in #{clone}: #{result}" unless result.exitstatus.zero?

    result
  end

  before(:all) do
    @apply = SandboxHarness.apply(class_manifest(num_clones: clones.size, run_mode: 'manual'), timeout: apply_timeout)
    raise "the class did not apply: #{@apply}" unless [0, 2].include?(@apply.exitstatus)

    clones.each do |clone|
      wait_for(timeout: 120) { bus_up?(clone) } or raise "#{clone}'s systemd never answered\n#{diagnostics}"
    end
    # clone2 checks in once, so that the server holds its facts too.
    agent_run!('clone2')
    # Without the cache: the config set aside and no cache left.
    in_clone!('clone1', 'sh', '-c', "mv #{facter_conf} /root/facter.conf.aside && rm -rf #{cache_dir}")
    agent_run!('clone1')
    @uncached = stored_facts(certnames[0]) if puppetdb?
    @cache_after_uncached = in_clone('clone1', 'ls', '-A', cache_dir).stdout
    # With the cache: the first runs write it (Facter 4.3, Debian 12's, only
    # once the cache directory is there, i.e. at the second), the last reads it.
    in_clone!('clone1', 'mv', '/root/facter.conf.aside', facter_conf)
    agent_run!('clone1')
    @after_first = cache_files
    agent_run!('clone1')
    @last_run_at = sandbox_now
    sleep 1
    agent_run!('clone1')
    @cached = stored_facts(certnames[0]) if puppetdb?
    @clone2 = stored_facts(certnames[1]) if puppetdb?
  end

  it 'builds the base with the cache config and no cache of its own' do
    base = '/var/lib/puppet-clone-army/debian-*'
    result = on_sandbox!('sh', '-c', "cat #{base}#{facter_conf}; ls -d #{base}#{cache_dir} 2>&1 || true", timeout: 30)
    expect(result.stdout).to include('ttls', '"augeas"', '"kernel"')
    expect(result.stdout).to match(%r{No such file or directory})
  end

  it 'writes no cache when facter.conf is set aside' do
    expect(@cache_after_uncached.strip).to eq('')
  end

  it 'serves the cached groups from the cache once it is written' do
    written = cache_files
    expect(written.keys).to include(*cached_groups.keys)
    cached_groups.each_key do |group|
      expect(written[group]).to be < @last_run_at,
                                "#{group} was written again at the last run: #{written} (after the first: #{@after_first})"
    end
    expect(written.keys).not_to include('networking', 'ssh', 'memory', 'uptime', 'file system')
    # Every group there is one it serves at each run, not one written again each time.
    expect(written.keys).to match_array(cached_groups.keys)
  end

  context 'as the server stored them' do
    before { skip "this suite's server has no PuppetDB, and without it keeps no copy of the facts it was sent" unless puppetdb? }

    it 'sends the server the same fact names with and without the cache' do
      expect(@cached.keys.sort).to eq(@uncached.keys.sort)
    end

    it 'sends the same value for every fact of a cached group' do
      top_level = cached_groups.values.flatten
      compared = @uncached.select { |name, _| top_level.include?(name.split('.').first) }
      expect(compared.keys).to include('augeas.version', 'kernelrelease', 'processors.count')
      expect(@cached.slice(*compared.keys)).to eq(compared)
    end

    it 'sends the same value for every fact that does not move between runs' do
      steady = @uncached.reject { |name, _| name.match?(moving) }
      expect(@cached.slice(*steady.keys)).to eq(steady)
    end

    it "sends each clone's own names, not the base's or another clone's" do
      expect(@cached).to include('networking.hostname' => 'clone1', 'networking.fqdn' => certnames[0],
                                 'clientcert' => certnames[0])
      expect(@clone2).to include('networking.hostname' => 'clone2', 'networking.fqdn' => certnames[1],
                                 'clientcert' => certnames[1])
    end
  end
end
