# frozen_string_literal: true

require 'json'
require 'tmpdir'
require 'fileutils'
require_relative '../../../bench/lib/clone_army_bench/derive'

describe CloneArmyBench::Derive do
  results = File.expand_path('../../../bench/results', __dir__)

  it 're-derives a committed fleet result from its raw readings and quoted runs, figure for figure' do
    derive = described_class.new(File.join(results, '2026-11-26T102651Z'))
    expect(derive.derived_keys).to include('noop_apply_40', 'noop_class_share_40', 'cpu_ratio', 'pss_timer', 'pss_daemon', 'fleet_pss')
    expect(derive.differences).to eq([])
  end

  it 're-derives a committed growth result (idle memory, fleet memory, flatness, the fitted line)' do
    derive = described_class.new(File.join(results, '2026-11-28T025742Z.json'))
    expect(derive.derived_keys).to eq(['grow_flat', 'pss_timer', 'fleet_pss', 'grow_slope', 'grow_fitted_max'])
    expect(derive.differences).to eq([])
  end

  it 'finds the committed medians an even count once took the lower run of' do
    derive = described_class.new(File.join(results, '2026-11-22T050429Z'))
    expect(derive.differences).to eq([['cpu_clone', 2.796, 3.199], ['cpu_host', 3.53, 3.634]])
  end

  it 'derives every committed result without an error, each within rounding or a known difference' do
    Dir.glob(File.join(results, '*.json')).each do |json|
      expect { described_class.new(json).derived }.not_to raise_error
    end
  end

  it 'judges a threshold figure again from its derived value' do
    Dir.mktmpdir do |dir|
      FileUtils.mkdir_p(File.join(dir, 'r.raw'))
      File.write(File.join(dir, 'r.raw', 'pss-timer-idle'), "clone1 10240 4 0\n")
      figure = { 'key' => 'pss_timer', 'label' => 'l', 'value' => 5.0, 'unit' => 'MiB', 'target' => '≤ 8', 'met' => true, 'note' => '' }
      File.write(File.join(dir, 'r.json'), JSON.generate('scale' => {}, 'figures' => [figure]))
      derived = described_class.new(File.join(dir, 'r')).derived['figures'].first
      expect(derived).to include('value' => 10.0, 'met' => false)
    end
  end

  it 'derives the fact cache\'s saving from the two medians and judges the clone\'s CPU per run again' do
    Dir.mktmpdir do |dir|
      fig = lambda do |key, value, target, runs|
        { 'key' => key, 'label' => 'l', 'value' => value, 'unit' => 'CPU-s', 'target' => target, 'met' => nil, 'note' => "runs: #{runs}" }
      end
      figures = [fig.call('cpu_clone', 9.9, '≤ 1.8', '1.7 1.9 1.6'), fig.call('cpu_clone_uncached', 9.9, '–', '2.2 2.0 2.3'),
                 fig.call('cpu_cache_ratio', 9.9, '–', '')]
      File.write(File.join(dir, 'r.json'), JSON.generate('scale' => {}, 'figures' => figures))
      derived = described_class.new(File.join(dir, 'r')).derived['figures'].to_h { |f| [f['key'], f] }
      expect(derived['cpu_clone']).to include('value' => 1.7, 'met' => true)
      expect(derived['cpu_clone_uncached']).to include('value' => 2.2, 'met' => nil)
      expect(derived['cpu_cache_ratio']['value']).to eq(0.773)
    end
  end

  it 'derives the phasing again once a run keeps its times' do
    Dir.mktmpdir do |dir|
      FileUtils.mkdir_p(File.join(dir, 'r.raw'))
      File.write(File.join(dir, 'r.raw', 'times'), "0 1000 1160\n")
      File.write(File.join(dir, 'r.raw', 'reports'), (0...10).map { |i| "clone#{i} #{1100 + i}.000\n" }.join)
      figure = { 'key' => 'phasing', 'label' => 'l', 'value' => 1.0, 'unit' => '', 'target' => 't', 'met' => false, 'note' => '' }
      File.write(File.join(dir, 'r.json'), JSON.generate('scale' => { 'runinterval' => 100 }, 'figures' => [figure]))
      expect(described_class.new(File.join(dir, 'r')).differences).to eq([])
    end
  end

  it 'fits the growth\'s slope over every batch, not its two ends' do
    Dir.mktmpdir do |dir|
      grows = [[0, 0.2], [100, 0.3], [200, 0.2]].map do |running, secs|
        { 'key' => "grow_#{running}", 'label' => 'l', 'value' => secs, 'unit' => 's', 'target' => '≤ 0.3', 'met' => true, 'note' => '' }
      end
      fits = ['grow_slope', 'grow_fitted_max'].map do |key|
        { 'key' => key, 'label' => 'l', 'value' => nil, 'unit' => 's', 'target' => '–', 'met' => nil, 'note' => '' }
      end
      File.write(File.join(dir, 'r.json'), JSON.generate('scale' => {}, 'figures' => grows + fits))
      derive = described_class.new(File.join(dir, 'r'))
      expect(derive.derived['figures'].last(2).map { |f| f['value'] }).to eq([0.0, 0.233])
      expect(derive.differences).to eq([['grow_slope', nil, 0.0], ['grow_fitted_max', nil, 0.233]])
    end
  end

  describe '.same_within_rounding?' do
    it 'holds a derived value to the committed one at the committed precision' do
      expect(described_class.same_within_rounding?(3.634, 3.6345)).to be(true)
      expect(described_class.same_within_rounding?(7.3, 7.26)).to be(true)
      expect(described_class.same_within_rounding?(7.3, 7.2)).to be(false)
      expect(described_class.same_within_rounding?(nil, nil)).to be(true)
      expect(described_class.same_within_rounding?(nil, 1)).to be(false)
    end
  end
end
