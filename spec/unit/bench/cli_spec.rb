# frozen_string_literal: true

require 'json'
require 'stringio'
require 'tmpdir'
require 'zlib'
require_relative '../../../bench/lib/clone_army_bench/cli'

describe CloneArmyBench::Cli do
  def run_cli(*argv, stdin: '')
    out = StringIO.new
    err = StringIO.new
    rc = described_class.run(argv, StringIO.new(stdin), out, err)
    [rc, out.string, err.string]
  end

  it 'prints the median as the bench quotes it' do
    expect(run_cli('median', stdin: "3\n1\n2\n4\n")).to eq([0, "2.500\n", ''])
  end

  it 'keeps a whole median of any count whole, as a count of resources is' do
    expect(run_cli('median-any', stdin: "7\n7\n9\n")[1]).to eq("7\n")
    expect(run_cli('median-any', stdin: "7\n8\n")[1]).to eq("7.500\n")
  end

  it 'refuses a median of too few runs with an error, not a number' do
    rc, out, err = run_cli('median', stdin: "3\n1\n")
    expect([rc, out]).to eq([2, ''])
    expect(err).to include('at least 3 runs')
  end

  it 'names the verbs when given an unknown one, and the arguments of a known one' do
    expect(run_cli('mean')[2]).to include('unknown verb "mean"', 'median')
    expect(run_cli('ratio', '1')[2]).to include('usage: bench.rb ratio NUM DEN NAME NAME')
  end

  it 'writes a result from the figures and scale collected' do
    Dir.mktmpdir do |dir|
      File.write(File.join(dir, 'figures'), run_cli('fig', 'k', 'l', '1.5', 's', '≤ 2', 'true')[1])
      File.write(File.join(dir, 'meta'), run_cli('meta', 'clones', '40')[1])
      rc, out, = run_cli('write', dir, dir, 'STAMP', 'complete')
      expect(rc).to eq(0)
      expect(out).to include("Scale: clones=40\n", '| l | 1.5 s | ≤ 2 | yes |')
      expect(JSON.parse(File.read(File.join(dir, 'STAMP.json')))).to include('status' => 'complete', 'scale' => { 'clones' => 40 })
    end
  end

  it 'reads the watcher\'s runs into the check-in count and the phasing' do
    runs = "clone1 100 true 4\nclone2 105 true 4\nclone2 105 true 4\n"
    expect(run_cli('checked-in', '100', '200', stdin: runs)[1]).to eq("2\n")
    expect(run_cli('starts', stdin: runs)[1]).to eq("clone1 96.000\nclone2 101.000\n")
    expect(run_cli('phasing', '90', '60', stdin: "clone1 96.000\nclone2 101.000\n")[1]).to eq("1.0 2 2 false 0.4000 0.8\n")
  end

  it 'exits 1 from derive when a committed figure does not come out again' do
    results = File.expand_path('../../../bench/results', __dir__)
    rc, out, err = run_cli('derive', File.join(results, '2026-11-22T050429Z'))
    expect(rc).to eq(1)
    expect(out).to start_with('# clone_army benchmark, 2026-11-22T050429Z')
    expect(err).to include('cpu_clone: committed 2.796, derived 3.199')
  end

  it 'sets committed growth runs side by side, and refuses fewer than a median takes' do
    results = File.expand_path('../../../bench/results', __dir__)
    runs = ['2026-11-27T212813Z', '2026-11-27T213856Z', '2026-11-27T214917Z'].map { |s| File.join(results, s) }
    rc, out, = run_cli('across', *runs)
    expect(rc).to eq(0)
    expect(out).to include('(`grow_900`) | 0.252 s | 0.312 s | 0.295 s | 0.295 s | ≤ 0.3 | yes |')
    expect(JSON.parse(run_cli('across', *runs, '--json')[1])['figures'].map { |f| f['key'] }).to include('grow_0', 'grow_flat')
    rc, out, err = run_cli('across', *runs.first(2))
    expect([rc, out]).to eq([2, ''])
    expect(err).to include('at least 3 results, got 2')
  end

  it 'makes a page of each kept timeline with the helper it is given, the timeline unpacked' do
    Dir.mktmpdir do |dir|
      Dir.mkdir(File.join(dir, 'S.raw'))
      Zlib::GzipWriter.open(File.join(dir, 'S.raw', 'timeline.jsonl.gz')) { |gz| gz.write("{\"timeline\":1}\n") }
      helper = File.join(dir, 'fake-helper')
      # Stands in for clone-army report --from T --format html --output P: copies T to P.
      File.write(helper, "#!/bin/sh\ncp \"$3\" \"$7\"\n")
      File.chmod(0o755, helper)
      expect(run_cli('pages', dir, helper)).to eq([0, "#{dir}/S.html\n", ''])
      expect(File.read(File.join(dir, 'S.html'))).to eq("{\"timeline\":1}\n")
    end
  end
end
